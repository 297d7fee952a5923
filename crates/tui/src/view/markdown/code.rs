//! Fenced code in colours: the block's language (the fence's first word: `rust`, `py`, `sh`…)
//! picks one of the grammars bundled with `syntect`, loaded once, the first time a block needs
//! them (a few milliseconds). Without colours, an unknown language or a grammar that fails on a
//! line, the code is shown as it is.
//!
//! Colouring costs (tens of milliseconds for a few hundred lines), and the answer that streams is
//! drawn again at each frame: so a block is coloured once it is finished (its closing fence has
//! come; until then it is shown as it is), and the colours of the last blocks coloured are kept,
//! by language and text, for the frames that draw them again.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use ratatui::style::Modifier;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme as SyntaxTheme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

use crate::escape;
use crate::view::wrap::Spans;
use crate::view::Theme;

/// The bundled grammars.
static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);

/// The colours of the code: a dark theme (the usual terminal's background).
static COLOURS: LazyLock<Option<SyntaxTheme>> =
    LazyLock::new(|| ThemeSet::load_defaults().themes.remove("base16-ocean.dark"));

/// How many coloured blocks are kept (then the kept ones are dropped and it starts again).
const KEPT: usize = 64;

/// Coloured blocks by language and text.
type Kept = HashMap<(String, String), Arc<Vec<Spans>>>;

/// The colours of the last blocks coloured.
static KEPT_BLOCKS: LazyLock<Mutex<Kept>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Tokens that name a language in a fence but are not a grammar's name or extension.
fn alias(lang: &str) -> &str {
    match lang {
        "shell" | "console" | "zsh" | "bash" => "sh",
        "javascript" | "jsx" | "mjs" | "ts" | "typescript" | "tsx" => "js",
        "python3" | "py3" => "py",
        "c++" => "cpp",
        "yml" => "yaml",
        "rs" => "rust",
        other => other,
    }
}

/// The lines of a code block (`code` as the fence holds it), each as styled spans, escaped:
/// coloured when `finished`.
pub(super) fn highlight(code: &str, lang: Option<&str>, finished: bool, t: Theme) -> Arc<Vec<Spans>> {
    let plain = || {
        let code = code.strip_suffix('\n').unwrap_or(code);
        Arc::new(
            code.split('\n')
                .map(|l| vec![(escape::text(l), t.text())])
                .collect::<Vec<Spans>>(),
        )
    };
    let Some(lang) = lang.filter(|_| t.colours() && finished) else {
        return plain();
    };
    let key = (lang.to_string(), code.to_string());
    if let Some(kept) = KEPT_BLOCKS.lock().ok().and_then(|k| k.get(&key).cloned()) {
        return kept;
    }
    let lines = Arc::new(coloured(code, lang, t).unwrap_or_else(|| plain().as_ref().clone()));
    if let Ok(mut kept) = KEPT_BLOCKS.lock() {
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, lines.clone());
    }
    lines
}

/// `code` in the colours of `lang`'s grammar (`None`: no grammar for it, or it failed).
fn coloured(code: &str, lang: &str, t: Theme) -> Option<Vec<Spans>> {
    let code = code.strip_suffix('\n').unwrap_or(code);
    let lower = lang.to_ascii_lowercase();
    let syntax = SYNTAXES.find_syntax_by_token(alias(&lower))?;
    let colours = COLOURS.as_ref()?;
    let mut h = HighlightLines::new(syntax, colours);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let ranges = h.highlight_line(line, &SYNTAXES).ok()?;
        let mut spans: Spans = Vec::new();
        for (style, piece) in ranges {
            let piece = piece.trim_end_matches(['\n', '\r']);
            if piece.is_empty() {
                continue;
            }
            let c = style.foreground;
            let mut s = t.code_rgb(c.r, c.g, c.b);
            if style.font_style.contains(FontStyle::BOLD) {
                s = s.add_modifier(Modifier::BOLD);
            }
            if style.font_style.contains(FontStyle::ITALIC) {
                s = s.add_modifier(Modifier::ITALIC);
            }
            spans.push((escape::text(piece), s));
        }
        out.push(spans);
    }
    // A block ending in an empty line (`code` was "a\n\n") keeps it.
    if code.ends_with('\n') || out.is_empty() {
        out.push(Vec::new());
    }
    Some(out)
}

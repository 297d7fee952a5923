//! Fenced code in colours: the block's language (the fence's first word: `rust`, `py`, `sh`…)
//! picks one of the grammars bundled with `syntect`, loaded once, the first time a block needs
//! them (a few milliseconds). Without colours, an unknown language or a grammar that fails on a
//! line, the code is shown as it is.

use std::sync::LazyLock;

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

/// The lines of a code block (`code` as the fence holds it), each as styled spans, escaped.
pub(super) fn highlight(code: &str, lang: Option<&str>, t: Theme) -> Vec<Spans> {
    let code = code.strip_suffix('\n').unwrap_or(code);
    let plain = || {
        code.split('\n')
            .map(|l| vec![(escape::text(l), t.text())])
            .collect::<Vec<Spans>>()
    };
    let Some(lang) = lang.filter(|_| t.colours()) else {
        return plain();
    };
    let lower = lang.to_ascii_lowercase();
    let Some(syntax) = SYNTAXES.find_syntax_by_token(alias(&lower)) else {
        return plain();
    };
    let Some(colours) = COLOURS.as_ref() else {
        return plain();
    };
    let mut h = HighlightLines::new(syntax, colours);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let Ok(ranges) = h.highlight_line(line, &SYNTAXES) else {
            return plain();
        };
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
    out
}

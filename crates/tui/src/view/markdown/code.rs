//! Fenced code in colours: the block's language (the fence's first word: `rust`, `py`, `sh`…)
//! picks one of the grammars bundled with `syntect`, loaded once, the first time a block needs
//! them (a few milliseconds). Without colours, an unknown language or a grammar that fails on a
//! line, the code is shown as it is.
//!
//! Colouring costs (tens of milliseconds for a few hundred lines), and the answer that streams is
//! drawn again at each frame. A block whose closing fence has not come yet is coloured as it
//! streams, line by line: the lines coloured so far and the grammar's state after them are kept
//! (for the last few such blocks), and the next frame colours only the lines that came since
//! (the last, unfinished line again each frame). A finished block's colours are kept by language
//! and text for the frames that draw it again.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use ratatui::style::Modifier;
use syntect::easy::HighlightLines;
use syntect::highlighting::{
    FontStyle, HighlightState, Style as SyntaxStyle, Theme as SyntaxTheme, ThemeSet,
};
use syntect::parsing::{ParseState, SyntaxSet};

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

/// How many blocks coloured as they stream are kept (the oldest is dropped first).
const OPEN_KEPT: usize = 4;

/// A block coloured as it streams: its lines up to its last line feed, their colours, and the
/// grammar's state after them (where the next line starts).
struct Open {
    lang: String,
    done: String,
    lines: Vec<Spans>,
    state: (HighlightState, ParseState),
}

/// The blocks coloured as they stream, newest last.
static OPEN_BLOCKS: LazyLock<Mutex<Vec<Open>>> = LazyLock::new(|| Mutex::new(Vec::new()));

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

/// The lines of a code block (`code` as the fence holds it), each as styled spans, escaped, in
/// colours when they are on and the language has a grammar. `finished`: its closing fence has
/// come (else it is coloured as far as it has come, and the colouring kept to go on from).
pub(super) fn highlight(code: &str, lang: Option<&str>, finished: bool, t: Theme) -> Arc<Vec<Spans>> {
    let plain = || {
        let code = code.strip_suffix('\n').unwrap_or(code);
        Arc::new(
            code.split('\n')
                .map(|l| vec![(escape::text(l), t.text())])
                .collect::<Vec<Spans>>(),
        )
    };
    let Some(lang) = lang.filter(|_| t.colours()) else {
        return plain();
    };
    let key = (lang.to_string(), code.to_string());
    if finished {
        if let Some(kept) = KEPT_BLOCKS.lock().ok().and_then(|k| k.get(&key).cloned()) {
            return kept;
        }
    }
    let Some(lines) = coloured(code, lang, finished, t) else {
        return plain();
    };
    let lines = Arc::new(lines);
    if finished {
        if let Ok(mut kept) = KEPT_BLOCKS.lock() {
            if kept.len() >= KEPT {
                kept.clear();
            }
            kept.insert(key, lines.clone());
        }
    }
    lines
}

/// `code` in the colours of `lang`'s grammar (`None`: no grammar for it, or it failed), going on
/// from a block coloured as it streamed when `code` begins with what that one had. Unless
/// `finished`, the colouring is kept to go on from.
fn coloured(code: &str, lang: &str, finished: bool, t: Theme) -> Option<Vec<Spans>> {
    let lower = lang.to_ascii_lowercase();
    let syntax = SYNTAXES.find_syntax_by_token(alias(&lower))?;
    let colours = COLOURS.as_ref()?;
    // The lines up to the last line feed are whole; what follows it is still being written.
    let cut = code.rfind('\n').map_or(0, |i| i + 1);
    let (whole, tail) = code.split_at(cut);
    let mut open = take_open(lang, whole).unwrap_or_else(|| {
        let h = HighlightLines::new(syntax, colours);
        Open {
            lang: lang.to_string(),
            done: String::new(),
            lines: Vec::new(),
            state: h.state(),
        }
    });
    let (hs, ps) = open.state;
    let mut h = HighlightLines::from_state(colours, hs, ps);
    for line in whole[open.done.len()..].split_inclusive('\n') {
        open.lines.push(spans(h.highlight_line(line, &SYNTAXES).ok()?, t));
    }
    open.done = whole.to_string();
    let (hs, ps) = h.state();
    let mut lines = open.lines.clone();
    if !tail.is_empty() {
        // Coloured from a copy of the state: it is coloured again, longer, at the next frame.
        let mut h = HighlightLines::from_state(colours, hs.clone(), ps.clone());
        lines.push(spans(h.highlight_line(tail, &SYNTAXES).ok()?, t));
    }
    if !finished {
        open.state = (hs, ps);
        keep_open(open);
    }
    // One line per line feed, and one for the unfinished line: as many as the plain text has
    // (`a\n\n` is `a` and an empty line); an empty block has one, empty.
    if lines.is_empty() {
        lines.push(Vec::new());
    }
    Some(lines)
}

/// Takes the kept streaming block of `lang` that `whole` begins with, if there is one.
fn take_open(lang: &str, whole: &str) -> Option<Open> {
    let mut open = OPEN_BLOCKS.lock().ok()?;
    let at = open
        .iter()
        .rposition(|o| o.lang == lang && whole.starts_with(o.done.as_str()))?;
    Some(open.remove(at))
}

/// Keeps a streaming block's colouring to go on from at the next frame.
fn keep_open(block: Open) {
    if let Ok(mut open) = OPEN_BLOCKS.lock() {
        if open.len() >= OPEN_KEPT {
            open.remove(0);
        }
        open.push(block);
    }
}

/// One line's coloured pieces as spans (its line feed left out).
fn spans(ranges: Vec<(SyntaxStyle, &str)>, t: Theme) -> Spans {
    let mut out: Spans = Vec::new();
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
        out.push((escape::text(piece), s));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `code` coloured from its first line, nothing kept.
    fn afresh(code: &str, lang: &str, t: Theme) -> Vec<Spans> {
        let syntax = SYNTAXES.find_syntax_by_token(alias(lang)).unwrap();
        let mut h = HighlightLines::new(syntax, COLOURS.as_ref().unwrap());
        let code = code.strip_suffix('\n').unwrap_or(code);
        let mut out: Vec<Spans> = code
            .split_inclusive('\n')
            .map(|l| spans(h.highlight_line(l, &SYNTAXES).unwrap(), t))
            .collect();
        if code.ends_with('\n') || out.is_empty() {
            out.push(Vec::new());
        }
        out
    }

    #[test]
    fn a_block_coloured_as_it_streams_has_the_colours_of_the_whole() {
        let t = Theme::new(false);
        let code = "/* a comment\n   over lines */\nfn main() {\n    let s = \"a \\\" b\";\n\n    println!(\"{s}\");\n}\n";
        // Every prefix, one character more each frame, as an answer streams in.
        for end in (0..=code.len()).filter(|&e| code.is_char_boundary(e)) {
            let part = &code[..end];
            let streamed = highlight(part, Some("rust"), false, t);
            assert_eq!(*streamed, afresh(part, "rust", t), "{part:?}");
            let plain = part.strip_suffix('\n').unwrap_or(part).split('\n').count();
            assert_eq!(streamed.len(), plain, "{part:?}");
        }
        // Closed: the same colours, kept by its text.
        let closed = highlight(code, Some("rust"), true, t);
        assert_eq!(*closed, afresh(code, "rust", t));
        assert!(Arc::ptr_eq(&closed, &highlight(code, Some("rust"), true, t)));
        // Without colours, or for a language without a grammar: as it is.
        for (lang, t) in [("rust", Theme::new(true)), ("no-such-language", t)] {
            let shown = highlight("let x;\n", Some(lang), false, t);
            assert_eq!(shown.len(), 1);
            assert_eq!(shown[0].len(), 1);
            assert_eq!(shown[0][0].0, "let x;");
        }
    }
}

//! Each construct as drawn, in plain text (colours off) and with its styles where they matter.

use ratatui::style::Modifier;
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

use super::render;
use crate::view::Theme;

fn rows(md: &str, width: usize) -> Vec<String> {
    render(md, Theme::new(true), width, 2)
        .iter()
        .map(|l| l.to_string().trim_end().to_string())
        .collect()
}

fn coloured(md: &str, width: usize) -> Vec<Line<'static>> {
    render(md, Theme::new(false), width, 2)
}

fn fits(lines: &[Line], width: usize) {
    for l in lines {
        assert!(l.width() <= width, "{} > {width}: {l}", l.width());
    }
}

#[test]
fn inline_styles_drop_their_marks() {
    let md = "Some **bold**, *italic*, ~~gone~~ and `code` here.";
    assert_eq!(rows(md, 80), ["  Some bold, italic, gone and `code` here."]);
    let lines = coloured(md, 80);
    let span = |text: &str| {
        lines[0]
            .spans
            .iter()
            .find(|s| s.content == text)
            .unwrap_or_else(|| panic!("no span {text:?} in {:?}", lines[0]))
            .style
    };
    assert!(span("bold").add_modifier.contains(Modifier::BOLD));
    assert!(span("italic").add_modifier.contains(Modifier::ITALIC));
    assert!(span("gone").add_modifier.contains(Modifier::CROSSED_OUT));
    // With colours a code span is coloured, its backticks gone.
    assert!(span("code").fg.is_some());
    assert_eq!(lines[0].to_string(), "  Some bold, italic, gone and code here.");
}

#[test]
fn headings_paragraphs_and_blank_rows() {
    let md = "# Title\n\nFirst paragraph\nwith a line break.\n\n## Part two\n\nSecond.";
    assert_eq!(
        rows(md, 80),
        [
            "  Title",
            "",
            "  First paragraph",
            "  with a line break.",
            "",
            "  Part two",
            "",
            "  Second."
        ]
    );
    let lines = coloured(md, 80);
    let title = &lines[0].spans[1];
    assert!(title.style.add_modifier.contains(Modifier::BOLD));
    assert!(title.style.add_modifier.contains(Modifier::UNDERLINED));
}

#[test]
fn lists_nested_and_numbered() {
    let md = "Steps:\n\n1. Read `calc/ops.py`\n2. Add `mul`\n   - test it\n   - document it\n     1. in the README\n3. Run the tests\n\n- a\n- [x] done\n- [ ] to do\n\nAfter.";
    assert_eq!(
        rows(md, 80),
        [
            "  Steps:",
            "",
            "  1. Read `calc/ops.py`",
            "  2. Add `mul`",
            "     ◦ test it",
            "     ◦ document it",
            "       1. in the README",
            "  3. Run the tests",
            "",
            "  • a",
            "  • [x] done",
            "  • [ ] to do",
            "",
            "  After."
        ]
    );
    // A list that starts at 7 keeps its numbers.
    assert_eq!(rows("7. seven\n8. eight", 80), ["  7. seven", "  8. eight"]);
}

#[test]
fn list_items_wrap_under_their_text() {
    let md = "- the quick brown fox jumps over the lazy dog";
    assert_eq!(
        rows(md, 20),
        ["  • the quick brown", "    fox jumps over", "    the lazy dog"]
    );
    fits(&coloured(md, 20), 20);
}

#[test]
fn block_quotes_have_a_bar_on_every_row() {
    let md = "> quoted words that wrap onto a second row\n>\n> second paragraph\n\nafter";
    assert_eq!(
        rows(md, 24),
        [
            "  │ quoted words that",
            "  │ wrap onto a second",
            "  │ row",
            "  │",
            "  │ second paragraph",
            "",
            "  after"
        ]
    );
}

#[test]
fn links_show_their_address() {
    assert_eq!(
        rows(
            "See [the docs](https://example.com/docs) and <https://x.org>.",
            80
        ),
        ["  See the docs (https://example.com/docs) and https://x.org."]
    );
    assert_eq!(rows("![a cat](cat.png)", 80), ["  [image: a cat] (cat.png)"]);
}

#[test]
fn fenced_code_is_indented_and_coloured() {
    let md = "Here:\n\n```python\ndef mul(a, b):\n    return a * b\n```\n\nDone.";
    assert_eq!(
        rows(md, 80),
        [
            "  Here:",
            "",
            "    def mul(a, b):",
            "        return a * b",
            "",
            "  Done."
        ]
    );
    let lines = coloured(md, 80);
    assert_eq!(lines[2].to_string(), "    def mul(a, b):");
    // The keyword has a colour of its own.
    let def = lines[2].spans.iter().find(|s| s.content == "def").unwrap();
    let name = lines[2].spans.iter().find(|s| s.content.contains("mul")).unwrap();
    assert!(def.style.fg.is_some());
    assert_ne!(def.style.fg, name.style.fg);
}

#[test]
fn an_unfinished_fence_streams_as_code() {
    let md = "Plan:\n\n```rust\nfn main() {\n    let x = 1;";
    assert_eq!(
        rows(md, 80),
        ["  Plan:", "", "    fn main() {", "        let x = 1;"]
    );
    // Found by the new-user trial: the block showed uncoloured until its closing fence came. It
    // is coloured as it streams, as it is once closed.
    let fg = |md: &str| {
        coloured(md, 80)[2]
            .spans
            .iter()
            .find(|s| s.content == "fn")
            .map(|s| s.style.fg)
    };
    assert!(fg(md).flatten().is_some(), "{:?}", coloured(md, 80)[2]);
    assert_eq!(fg(md), fg(&format!("{md}\n```")));
    assert_eq!(coloured(md, 80), coloured(&format!("{md}\n```"), 80));
    assert!(super::fence_closed("```rust\nx\n```"));
    assert!(super::fence_closed("~~~~\nx\n~~~~~\n"));
    assert!(!super::fence_closed("````\nx\n```"));
    assert!(!super::fence_closed("```"));
    // The fence's own marks never show, finished or not.
    for md in ["```", "```sh\nls", "```sh\nls\n```"] {
        assert!(rows(md, 80).iter().all(|r| !r.contains("```")), "{md:?}");
    }
}

#[test]
fn long_code_lines_wrap_inside_the_block() {
    let long = format!("```\n{}\n```", "x".repeat(50));
    let r = rows(&long, 30);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r.iter().all(|l| l.starts_with("    x")), "{r:?}");
    fits(&coloured(&long, 30), 30);
    let code = "```rust\nlet a_very_long_name = some_function(with, many, arguments, that, go, on);\n```";
    fits(&coloured(code, 40), 40);
}

#[test]
fn tables_are_aligned() {
    let md = "| name | turns | note |\n|:--|--:|:-:|\n| main | 3 | ok |\n| fork of 'mark' | 12 | - |";
    assert_eq!(
        rows(md, 80),
        [
            "  name           │ turns │ note",
            "  ───────────────┼───────┼─────",
            "  main           │     3 │  ok",
            "  fork of 'mark' │    12 │  -"
        ]
    );
}

#[test]
fn a_wide_table_wraps_its_cells() {
    let md = "| a | b |\n|---|---|\n| short | a long cell that has to wrap inside its column |";
    let r = rows(md, 30);
    fits(&coloured(md, 30), 30);
    assert!(r.len() > 3, "{r:?}");
    assert!(r.iter().all(|l| l.contains('│') || l.contains('┼')), "{r:?}");
    let all: String = r.join(" ");
    for word in ["long", "cell", "wrap", "inside", "column"] {
        assert!(all.contains(word), "{word} lost: {r:?}");
    }
}

#[test]
fn rules_and_html() {
    assert_eq!(rows("a\n\n---\n\nb", 12), ["  a", "", "  ──────────", "", "  b"]);
    // HTML is shown as text, never interpreted.
    assert_eq!(rows("x <b>y</b>", 80), ["  x <b>y</b>"]);
}

#[test]
fn wide_characters_wrap_by_cell() {
    let md = "漢字漢字漢字漢字漢字 **太字** です";
    let lines = coloured(md, 12);
    fits(&lines, 12);
    let all: String = lines.iter().map(|l| l.to_string().replace(' ', "")).collect();
    assert_eq!(all, "漢字漢字漢字漢字漢字太字です");
    let table = "| 名前 | x |\n|---|---|\n| 漢字 | 1 |";
    let r = rows(table, 40);
    assert_eq!(r[0].find('│'), r[2].find('│'));
    assert_eq!(r[0].width(), r[2].width());
}

#[test]
fn control_characters_are_escaped() {
    let r = rows("a\u{1b}[2Jb `c\u{7}`\n\n```\nd\u{1b}e\n```", 80);
    assert!(
        r.iter().all(|l| !l.contains('\u{1b}') && !l.contains('\u{7}')),
        "{r:?}"
    );
    assert!(r[0].contains("\\u{1b}"));
}

#[test]
fn a_paragraph_that_ended_keeps_its_blank_row_while_streaming() {
    assert_eq!(rows("one\n\n", 80), ["  one", ""]);
    assert_eq!(rows("one\n", 80), ["  one"]);
    assert_eq!(rows("one\n\ntw", 80), ["  one", "", "  tw"]);
}

#[test]
fn never_wider_than_the_width() {
    let md = "# A heading that is long\n\n> - quoted list item with `code` and **bold** words\n>   1. nested numbered item with more words\n\n| col | another column |\n|---|---|\n| 1 | two three four five six |\n\n```rust\nfn f() { let s = \"a long string literal here\"; }\n```";
    for width in [12, 20, 33, 80] {
        fits(&coloured(md, width), width.max(12));
    }
}

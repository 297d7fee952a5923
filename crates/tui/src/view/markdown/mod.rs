//! An answer's markdown as terminal rows: the text is parsed by `pulldown-cmark` (CommonMark with
//! tables, strikethrough and task lists) and each block drawn as rows at most `width` cells wide:
//! paragraphs and headings wrapped by [`wrap`], lists with their bullets or numbers and their
//! continuation rows under the item's text, block quotes with a bar on every row, fenced code in
//! colours (`code`), tables as aligned columns (`table`), rules across the room, a link's text
//! followed by its address. Blocks are one blank row apart, as the paragraphs of the text were.
//!
//! A line break inside a paragraph is kept (an answer's lines are drawn as the model wrote them),
//! and so is a blank line at the end (a paragraph that has ended while the rest still streams). An
//! unfinished fence runs to the end of the text, so a code block streams in as code, coloured as it comes. Every piece
//! of text is escaped ([`escape::text`]); markdown's HTML is shown as the text it is.
//!
//! Without colours (`NO_COLOR`) bold, italic, underline and reverse stay, and code spans keep
//! their backticks so that they still stand out.

mod code;
mod table;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::escape;
use crate::view::wrap::{wrap, Spans};
use crate::view::Theme;
use table::Table;

/// The bullets of unordered lists, by depth (then again from the first).
const BULLETS: [&str; 3] = ["•", "◦", "▪"];

/// Renders `text` (markdown) as rows at most `width` cells wide, each starting with `indent`
/// spaces.
pub fn render(text: &str, t: Theme, width: usize, indent: usize) -> Vec<Line<'static>> {
    let mut r = Renderer::new(t, width.max(1), indent);
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for (event, range) in Parser::new_ext(text, opts).into_offset_iter() {
        if let Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) = &event {
            r.fence_closed = fence_closed(text.get(range).unwrap_or(""));
        }
        r.event(event);
    }
    r.flush();
    if text.ends_with("\n\n") && !r.out.is_empty() {
        r.blank_row();
    }
    // Marks nested deeper than a narrow screen has room for: their rows are wrapped again.
    if r.out.iter().all(|l| l.width() <= width) {
        return r.out;
    }
    let mut out = Vec::with_capacity(r.out.len());
    for line in r.out {
        if line.width() <= width {
            out.push(line);
        } else {
            let spans: Spans = line
                .spans
                .into_iter()
                .map(|s| (s.content.into_owned(), s.style))
                .collect();
            out.extend(wrap(&spans, width, indent));
        }
    }
    out
}

/// Whether a fenced block's source (its opening fence to its end) ends with its closing fence.
fn fence_closed(block: &str) -> bool {
    let mut lines = block.trim_end().lines();
    let opening = lines.next().unwrap_or("").trim_start();
    let Some(c) = opening.chars().next() else {
        return false;
    };
    let n = opening.chars().take_while(|&x| x == c).count();
    lines.next_back().is_some_and(|last| {
        let last = last.trim();
        last.chars().all(|x| x == c) && last.chars().count() >= n
    })
}

/// What encloses the text being drawn (outermost first): each puts its mark before every row.
#[derive(Debug)]
enum Container {
    /// A block quote: `│ ` on every row.
    Quote,
    /// A list item: its bullet or number on its first row, as many spaces on the others.
    Item { marker: String, first: bool },
    /// A code block: two spaces before each of its rows.
    Code,
}

/// A code block being read.
#[derive(Debug)]
struct Code {
    lang: Option<String>,
    text: String,
    /// Its closing fence has come (an indented block is always whole).
    finished: bool,
}

struct Renderer {
    t: Theme,
    width: usize,
    indent: usize,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// The lines of the paragraph (heading, item text, cell) being read.
    lines: Vec<Spans>,
    /// The inline styles open (strong, emphasis, a link, a heading), innermost last.
    styles: Vec<Style>,
    /// The open links' addresses, and the text each has shown so far.
    links: Vec<(String, String)>,
    /// The open lists' next numbers (`None`: bullets).
    lists: Vec<Option<u64>>,
    /// A blank row is due before the next block.
    blank: bool,
    code: Option<Code>,
    table: Option<Table>,
    /// Whether the fenced block starting now is closed (set from its source before its event).
    fence_closed: bool,
}

impl Renderer {
    fn new(t: Theme, width: usize, indent: usize) -> Renderer {
        Renderer {
            t,
            width,
            indent,
            out: Vec::new(),
            containers: Vec::new(),
            lines: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            lists: Vec::new(),
            blank: false,
            code: None,
            table: None,
            fence_closed: true,
        }
    }

    fn style(&self) -> Style {
        self.styles.iter().fold(self.t.text(), |acc, s| acc.patch(*s))
    }

    /// Text in the current style, line breaks starting new lines.
    fn push(&mut self, text: &str, style: Style) {
        for (i, part) in text.split('\n').enumerate() {
            if i > 0 || self.lines.is_empty() {
                self.lines.push(Vec::new());
            }
            if !part.is_empty() {
                if let Some(line) = self.lines.last_mut() {
                    line.push((escape::text(part), style));
                }
            }
        }
    }

    fn line_break(&mut self) {
        if self.lines.is_empty() {
            self.lines.push(Vec::new());
        }
        self.lines.push(Vec::new());
    }

    /// The width of the marks before the next row.
    fn prefix_width(&self) -> usize {
        self.indent
            + self
                .containers
                .iter()
                .map(|c| match c {
                    Container::Quote => 2,
                    Container::Item { marker, .. } => marker.width(),
                    Container::Code => 2,
                })
                .sum::<usize>()
    }

    /// The marks before the next row (an item's marker is used once, on its first row).
    fn prefix(&mut self, blank: bool) -> Vec<Span<'static>> {
        let mut spans = vec![Span::raw(" ".repeat(self.indent))];
        for c in &mut self.containers {
            match c {
                Container::Quote => spans.push(Span::styled("│ ", self.t.dim())),
                Container::Item { marker, first } if *first && !blank => {
                    *first = false;
                    spans.push(Span::styled(marker.clone(), self.t.accent()));
                }
                Container::Item { marker, .. } => spans.push(Span::raw(" ".repeat(marker.width()))),
                Container::Code => spans.push(Span::raw("  ")),
            }
        }
        spans
    }

    /// The room left for text after the marks (never less than a few cells: deep nesting on a
    /// narrow screen wraps again where the entry is drawn).
    fn room(&self) -> usize {
        self.width.saturating_sub(self.prefix_width()).max(8)
    }

    /// Puts rows after the marks.
    fn rows(&mut self, rows: Vec<Line<'static>>) {
        for row in rows {
            let mut spans = self.prefix(false);
            spans.extend(row.spans);
            self.out.push(Line::from(spans));
        }
    }

    /// A blank row: only the quote bars show on it.
    fn blank_row(&mut self) {
        if self.containers.iter().any(|c| matches!(c, Container::Quote)) {
            let spans = self.prefix(true);
            self.out.push(Line::from(spans));
        } else {
            self.out.push(Line::default());
        }
    }

    /// Draws the text read so far (wrapped to the room).
    fn flush(&mut self) {
        let lines = std::mem::take(&mut self.lines);
        let room = self.room();
        for line in lines {
            let rows = wrap(&line, room, 0);
            self.rows(rows);
        }
    }

    /// A block starts: the text before it is drawn, and the blank row due before it.
    fn start_block(&mut self) {
        self.flush();
        if self.blank && !self.out.is_empty() {
            self.blank_row();
        }
        self.blank = false;
    }

    /// A block ended: a blank row is due before the next one.
    fn end_block(&mut self) {
        self.flush();
        self.blank = true;
    }

    fn event(&mut self, event: Event) {
        if let Some(code) = &mut self.code {
            match event {
                Event::Text(s) => code.text.push_str(&s),
                Event::End(TagEnd::CodeBlock) => self.end_code(),
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(s) => {
                if let Some((_, shown)) = self.links.last_mut() {
                    shown.push_str(&s);
                }
                self.push(&s, self.style());
            }
            Event::Code(s) => {
                let style = self.style().patch(self.t.code_span());
                if self.t.colours() {
                    self.push(&s, style);
                } else {
                    self.push(&format!("`{s}`"), style);
                }
            }
            Event::Html(s) | Event::InlineHtml(s) => {
                let s = s.strip_suffix('\n').unwrap_or(&s).to_string();
                self.push(&s, self.t.dim());
            }
            Event::InlineMath(s) | Event::DisplayMath(s) | Event::FootnoteReference(s) => {
                self.push(&s, self.style());
            }
            Event::SoftBreak | Event::HardBreak => self.line_break(),
            Event::Rule => {
                self.start_block();
                let room = self.room().min(80);
                self.rows(vec![Line::styled("─".repeat(room), self.t.dim())]);
                self.blank = true;
            }
            Event::TaskListMarker(done) => {
                self.push(if done { "[x] " } else { "[ ] " }, self.t.dim());
            }
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph | Tag::HtmlBlock | Tag::MetadataBlock(_) => self.start_block(),
            Tag::Heading { level, .. } => {
                self.start_block();
                let n = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    _ => 3,
                };
                self.styles.push(self.t.heading(n));
            }
            Tag::BlockQuote(_) => {
                self.start_block();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.start_block();
                let finished = matches!(kind, CodeBlockKind::Indented) || self.fence_closed;
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
                        .next()
                        .filter(|l| !l.is_empty())
                        .map(str::to_string),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(Code {
                    lang,
                    text: String::new(),
                    finished,
                });
            }
            Tag::List(start) => {
                self.start_block();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                self.blank = false;
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => format!("{} ", BULLETS[depth % BULLETS.len()]),
                };
                self.containers.push(Container::Item { marker, first: true });
            }
            Tag::Table(aligns) => {
                self.start_block();
                self.table = Some(Table::new(aligns));
            }
            Tag::TableHead => {
                if let Some(t) = &mut self.table {
                    t.row(true);
                }
            }
            Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.row(false);
                }
            }
            Tag::TableCell => self.lines.clear(),
            Tag::Emphasis => self.styles.push(self.t.italic()),
            Tag::Strong => self.styles.push(self.t.bold()),
            Tag::Strikethrough => self.styles.push(self.t.struck()),
            Tag::Link { dest_url, .. } => {
                self.styles.push(self.t.link());
                self.links.push((dest_url.to_string(), String::new()));
            }
            Tag::Image { dest_url, .. } => {
                self.push("[image: ", self.t.dim());
                self.styles.push(self.t.italic());
                self.links.push((dest_url.to_string(), String::new()));
            }
            Tag::FootnoteDefinition(label) => {
                self.start_block();
                self.push(&format!("[^{label}]: "), self.t.dim());
            }
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::default()),
            Tag::DefinitionList | Tag::DefinitionListTitle | Tag::DefinitionListDefinition => {
                self.start_block();
            }
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph
            | TagEnd::HtmlBlock
            | TagEnd::MetadataBlock(_)
            | TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition => self.end_block(),
            TagEnd::Heading(_) => {
                self.styles.pop();
                self.end_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.blank = true;
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.blank = true;
            }
            TagEnd::Item => {
                self.flush();
                // An empty item still shows its marker.
                if matches!(self.containers.last(), Some(Container::Item { first: true, .. })) {
                    self.rows(vec![Line::default()]);
                }
                self.containers.pop();
                self.blank = false;
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let room = self.room();
                    let lines = table.lines(room, self.t);
                    for line in lines {
                        let rows = wrap(&line, room, 0);
                        self.rows(rows);
                    }
                }
                self.blank = true;
            }
            TagEnd::TableHead | TagEnd::TableRow => {}
            TagEnd::TableCell => {
                let cell: Spans = std::mem::take(&mut self.lines)
                    .into_iter()
                    .reduce(|mut a, b| {
                        a.push((" ".to_string(), self.t.text()));
                        a.extend(b);
                        a
                    })
                    .unwrap_or_default();
                if let Some(t) = &mut self.table {
                    t.cell(cell);
                }
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some((url, shown)) = self.links.pop() {
                    let same = url == shown || url.strip_prefix("mailto:") == Some(shown.as_str());
                    if !url.is_empty() && !same {
                        self.push(&format!(" ({url})"), self.t.dim());
                    }
                }
            }
            TagEnd::Image => {
                self.styles.pop();
                if let Some((url, _)) = self.links.pop() {
                    let tail = if url.is_empty() {
                        "]".to_string()
                    } else {
                        format!("] ({url})")
                    };
                    self.push(&tail, self.t.dim());
                }
            }
        }
    }

    /// A code block ended: its lines drawn in colours, each wrapped under itself.
    fn end_code(&mut self) {
        let Some(code) = self.code.take() else { return };
        self.containers.push(Container::Code);
        let room = self.room();
        let lines = code::highlight(&code.text, code.lang.as_deref(), code.finished, self.t);
        for line in lines.iter() {
            let rows = wrap(line, room, 0);
            self.rows(rows);
        }
        self.containers.pop();
        self.blank = true;
    }
}

#[cfg(test)]
mod tests;

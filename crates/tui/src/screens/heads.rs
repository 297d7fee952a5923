//! `/heads`: the session's heads as a tree (each head under the head it came from), with a
//! cursor; Enter selects the head under it.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::Frame;
use retrace_protocol::{HeadEntry, SwitchRequest};

use crate::app::App;
use crate::effect::Effect;
use crate::escape;
use crate::screens::{ctrl, Mode};
use crate::view::boxed::{boxed, count, row, Scroll};
use crate::view::Theme;

/// One row of the tree: a head and the prefix that draws its place (`├─ `, `│  └─ `, …).
#[derive(Debug, Clone, PartialEq)]
pub struct HeadRow {
    /// The head.
    pub head: HeadEntry,
    /// The tree's lines before it.
    pub prefix: String,
}

/// The heads tree and its cursor.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadTree {
    /// The rows, in tree order.
    pub rows: Vec<HeadRow>,
    /// The row under the cursor.
    pub cursor: usize,
}

impl HeadTree {
    /// The tree of `heads` (as the controller lists them, oldest first); the cursor on the
    /// selected head. A head whose parent is not listed is a root.
    pub fn new(heads: Vec<HeadEntry>) -> HeadTree {
        let known = |id: &str| heads.iter().any(|h| h.id.as_str() == id);
        let roots: Vec<usize> = (0..heads.len())
            .filter(|&i| {
                heads[i]
                    .parent_head
                    .as_ref()
                    .is_none_or(|p| !known(p.as_str()) || p == &heads[i].id)
            })
            .collect();
        let mut rows = Vec::new();
        let mut seen = vec![false; heads.len()];
        for (n, &root) in roots.iter().enumerate() {
            let last = n + 1 == roots.len();
            walk(&heads, root, "", last, true, &mut seen, &mut rows);
        }
        // A cycle in the parents (never written by Retrace) leaves heads unreached: list them flat.
        for (i, h) in heads.iter().enumerate() {
            if !seen[i] {
                rows.push(HeadRow {
                    head: h.clone(),
                    prefix: String::new(),
                });
            }
        }
        let cursor = rows.iter().position(|r| r.head.selected).unwrap_or(0);
        HeadTree { rows, cursor }
    }

    /// Moves the cursor up.
    pub fn up(&mut self) {
        self.cursor = self.cursor.saturating_sub(1);
    }

    /// Moves the cursor down.
    pub fn down(&mut self) {
        if self.cursor + 1 < self.rows.len() {
            self.cursor += 1;
        }
    }

    /// The head under the cursor.
    pub fn current(&self) -> Option<&HeadEntry> {
        self.rows.get(self.cursor).map(|r| &r.head)
    }
}

impl App {
    /// The heads asked for by [`Effect::LoadHeads`].
    pub fn on_heads(&mut self, heads: Vec<HeadEntry>) {
        self.set_head_names(&heads);
        if self.mode == Mode::Chat {
            self.mode = Mode::Heads(HeadTree::new(heads));
        }
    }

    pub(crate) fn heads_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Mode::Heads(tree) = &mut self.mode else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => tree.up(),
            KeyCode::Down | KeyCode::Char('j') => tree.down(),
            KeyCode::Esc | KeyCode::Char('q') => self.mode = Mode::Chat,
            _ if ctrl(&key, 'c') => self.mode = Mode::Chat,
            KeyCode::Enter => {
                let chosen = tree.current().filter(|h| !h.selected).map(|h| h.id.to_string());
                self.mode = Mode::Chat;
                if let Some(head) = chosen {
                    return vec![Effect::Switch(SwitchRequest { head })];
                }
            }
            _ => {}
        }
        Vec::new()
    }
}

/// Draws the heads of the session.
pub(crate) fn draw(frame: &mut Frame, area: Rect, tree: &HeadTree, t: Theme) {
    let body: Vec<Line<'static>> = tree
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let h = &r.head;
            // What the controller calls it (its name, or what it is and its turn's prompt);
            // heads listed by an older controller have no title: their kind stands in.
            let title = match (&h.name, h.title.is_empty()) {
                (Some(name), _) => format!("\"{}\"", escape::first_line(name, 54)),
                (None, true) => h.kind.as_str().to_string(),
                (None, false) => escape::first_line(&h.title, 56),
            };
            let mut marks = Vec::new();
            if h.selected {
                marks.push("selected");
            }
            if h.retired {
                marks.push("retired");
            }
            let marks = if marks.is_empty() {
                String::new()
            } else {
                format!(" · {}", marks.join(", "))
            };
            let id = match h.id.as_str() == title {
                true => String::new(),
                false => format!(" · {}", escape::line(h.id.as_str())),
            };
            let text = format!(
                "{}{title} · {}, {}{id}{marks}",
                r.prefix,
                count(h.turns, "turn"),
                count(h.message_count, "message"),
            );
            row(
                text,
                tree.cursor == i,
                t,
                if h.retired { t.dim() } else { t.text() },
            )
        })
        .collect();
    boxed(
        frame,
        area,
        " Heads ",
        body,
        Scroll::Focus(tree.cursor),
        "↑/↓ move · Enter switch to it · Esc close",
        t,
    );
}

fn walk(
    heads: &[HeadEntry],
    i: usize,
    indent: &str,
    last: bool,
    root: bool,
    seen: &mut [bool],
    rows: &mut Vec<HeadRow>,
) {
    if seen[i] {
        return;
    }
    seen[i] = true;
    let (prefix, below) = if root {
        (String::new(), String::new())
    } else if last {
        (format!("{indent}└─ "), format!("{indent}   "))
    } else {
        (format!("{indent}├─ "), format!("{indent}│  "))
    };
    rows.push(HeadRow {
        head: heads[i].clone(),
        prefix,
    });
    let children: Vec<usize> = (0..heads.len())
        .filter(|&c| c != i && !seen[c] && heads[c].parent_head.as_ref() == Some(&heads[i].id))
        .collect();
    for (n, &c) in children.iter().enumerate() {
        walk(heads, c, &below, n + 1 == children.len(), false, seen, rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::{HeadId, HeadKind};

    fn head(id: &str, parent: Option<&str>, selected: bool) -> HeadEntry {
        HeadEntry {
            id: HeadId::new(id),
            kind: HeadKind::Fork,
            name: None,
            parent_head: parent.map(HeadId::new),
            fork_from: None,
            selected,
            retired: false,
            message_count: 1,
            turns: 1,
            last_activity: None,
            title: String::new(),
        }
    }

    #[test]
    fn draws_a_tree() {
        let t = HeadTree::new(vec![
            head("main", None, false),
            head("a", Some("main"), false),
            head("b", Some("a"), true),
            head("c", Some("main"), false),
            head("x", Some("y"), false),
            head("y", Some("x"), false),
        ]);
        let shown: Vec<String> = t
            .rows
            .iter()
            .map(|r| format!("{}{}", r.prefix, r.head.id.as_str()))
            .collect();
        assert_eq!(shown, ["main", "├─ a", "│  └─ b", "└─ c", "x", "y"]);
        assert_eq!(t.current().map(|h| h.id.as_str()), Some("b"));
    }
}

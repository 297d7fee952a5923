//! The transcript's rows kept between frames (in the view's state, [`crate::view::ViewState`]):
//! each entry is wrapped once and its rows kept until the entry's revision, the width, the
//! colours, the details switch or the app's view generation changes, with the running row count
//! at each entry so that a frame clones only the rows it shows.
//!
//! The guarantee it could weaken is that a frame shows exactly what laying out the whole
//! transcript again would show. It rests on the key: a transcript hands out a new revision on
//! every change and never reuses one (`transcript` module), and anything else that changes how an
//! entry renders is in the key or bumps [`App::view_generation`]. The tests (`layout_tests.rs`)
//! draw, mutate, draw again and compare with a layout made from nothing, for every kind of change.
//!
//! What it costs: the rows of the whole transcript stay in memory (a row is a few spans), and each
//! frame still walks every entry's revision (a comparison per entry, microseconds for thousands).
//! An entry that changes is wrapped again whole: the newest piece of a streamed answer is
//! re-wrapped at each frame while it grows, the rest of the transcript is not.

use std::fmt;

use ratatui::text::Line;

use crate::app::App;
use crate::screens::chat::draw::entry_rows;
use crate::view::Theme;

/// What every entry's rows depend on besides the entry itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    width: usize,
    no_color: bool,
    details: bool,
    view_generation: u64,
}

/// The rows of one entry, and the revision they were made from.
#[derive(Clone)]
struct ItemRows {
    revision: u64,
    rows: Vec<Line<'static>>,
}

/// Every entry's rows at one width.
#[derive(Clone, Default)]
pub(crate) struct ChatLayout {
    key: Option<Key>,
    items: Vec<ItemRows>,
    /// `ends[i]`: the rows of entries `0..=i`.
    ends: Vec<usize>,
}

impl ChatLayout {
    /// Brings the rows up to date with `app`'s transcript at `width`, wrapping again only the
    /// entries whose revision changed (every entry when the key changed).
    pub(crate) fn update(&mut self, app: &App, width: usize) {
        let key = Key {
            width,
            no_color: app.no_color(),
            details: app.details(),
            view_generation: app.view_generation(),
        };
        if self.key != Some(key) {
            self.key = Some(key);
            self.items.clear();
            self.ends.clear();
        }
        let t = Theme::new(key.no_color);
        let details = key.details;
        let entries = app.transcript().entries();
        self.items.truncate(entries.len());
        let mut first_changed = self.items.len();
        for (i, shown) in entries.iter().enumerate() {
            let revision = shown.revision;
            match self.items.get_mut(i) {
                Some(kept) if kept.revision == revision => {}
                Some(kept) => {
                    kept.revision = revision;
                    kept.rows = entry_rows(&shown.entry, details, t, width);
                    first_changed = first_changed.min(i);
                }
                None => self.items.push(ItemRows {
                    revision,
                    rows: entry_rows(&shown.entry, details, t, width),
                }),
            }
        }
        self.ends.truncate(first_changed);
        let mut total = self.ends.last().copied().unwrap_or(0);
        for kept in self.items.iter().skip(first_changed) {
            total += kept.rows.len();
            self.ends.push(total);
        }
    }

    /// The transcript's rows.
    pub(crate) fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// Rows `start..end` of the transcript (fewer if it has fewer), cloned.
    pub(crate) fn rows(&self, start: usize, end: usize) -> Vec<Line<'static>> {
        let end = end.min(self.len());
        let mut out = Vec::with_capacity(end.saturating_sub(start));
        let mut i = self.ends.partition_point(|&e| e <= start);
        let mut row = start;
        while row < end {
            let (Some(kept), Some(&item_end)) = (self.items.get(i), self.ends.get(i)) else {
                break;
            };
            let item_start = item_end.saturating_sub(kept.rows.len());
            let to = end.min(item_end);
            if let Some(rows) = kept.rows.get(row.saturating_sub(item_start)..to - item_start) {
                out.extend_from_slice(rows);
            }
            row = to;
            i += 1;
        }
        out
    }
}

impl fmt::Debug for ChatLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatLayout")
            .field("key", &self.key)
            .field("items", &self.items.len())
            .field("rows", &self.len())
            .finish()
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;

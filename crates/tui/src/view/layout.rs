//! The transcript's rows kept between frames: each item is wrapped once and its rows kept until
//! the item's revision, the width, the colours or the app's view generation changes, with the
//! running row count at each item so that a frame clones only the rows it shows.
//!
//! The guarantee it could weaken is that a frame shows exactly what laying out the whole
//! transcript again would show. It rests on the key: a transcript hands out a new revision on
//! every change and never reuses one (`transcript` module), and anything else that changes how an
//! item renders bumps [`App::view_generation`]. The tests (`layout_tests.rs`) draw, mutate, draw
//! again and compare with a layout made from nothing, for every kind of change.
//!
//! What it costs: the rows of the whole transcript stay in memory (a row is a few spans), and each
//! frame still walks every item's revision (a comparison per item, microseconds for thousands). An
//! item that changes is wrapped again whole: a streamed answer is re-wrapped at each frame while
//! it grows, the rest of the transcript is not.

use std::fmt;
use std::sync::{Mutex, TryLockError};

use ratatui::text::Line;

use crate::app::App;
use crate::view::chat::item_rows;
use crate::view::theme::Theme;

/// What every item's rows depend on besides the item itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    width: usize,
    no_color: bool,
    view_generation: u64,
}

/// The rows of one item, and the revision they were made from.
#[derive(Clone)]
struct ItemRows {
    revision: u64,
    rows: Vec<Line<'static>>,
}

/// Every item's rows at one width.
#[derive(Clone, Default)]
pub(crate) struct ChatLayout {
    key: Option<Key>,
    items: Vec<ItemRows>,
    /// `ends[i]`: the rows of items `0..=i`.
    ends: Vec<usize>,
}

impl ChatLayout {
    /// Brings the rows up to date with `app`'s transcript at `width`, wrapping again only the
    /// items whose revision changed (every item when the key changed).
    pub(crate) fn update(&mut self, app: &App, width: usize) {
        let key = Key {
            width,
            no_color: app.no_color(),
            view_generation: app.view_generation(),
        };
        if self.key != Some(key) {
            self.key = Some(key);
            self.items.clear();
            self.ends.clear();
        }
        let t = Theme::new(key.no_color);
        let transcript = app.transcript();
        let (items, revisions) = (transcript.items(), transcript.revisions());
        self.items.truncate(items.len());
        let mut first_changed = self.items.len();
        for (i, (item, &revision)) in items.iter().zip(revisions).enumerate() {
            match self.items.get_mut(i) {
                Some(kept) if kept.revision == revision => {}
                Some(kept) => {
                    kept.revision = revision;
                    kept.rows = item_rows(item, app.details(), t, width);
                    first_changed = first_changed.min(i);
                }
                None => self.items.push(ItemRows {
                    revision,
                    rows: item_rows(item, app.details(), t, width),
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

/// The [`ChatLayout`] an [`App`] keeps, filled by drawing (which sees only `&App`). A mutex, not a
/// `RefCell`, so the app stays `Sync`; it is never contended in the UI, which draws from one
/// thread, and a draw that finds it taken lays out without it.
#[derive(Default)]
pub(crate) struct ChatLayoutCache(Mutex<ChatLayout>);

impl ChatLayoutCache {
    /// Runs `f` on the layout; `None` when another thread holds it. A layout left behind by a
    /// panic is dropped, not trusted.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut ChatLayout) -> R) -> Option<R> {
        match self.0.try_lock() {
            Ok(mut layout) => Some(f(&mut layout)),
            Err(TryLockError::Poisoned(p)) => {
                let mut layout = p.into_inner();
                *layout = ChatLayout::default();
                self.0.clear_poison();
                Some(f(&mut layout))
            }
            Err(TryLockError::WouldBlock) => None,
        }
    }
}

/// A clone starts empty: the layout is derived data, and laying out again when the clone is
/// first drawn costs less than copying every row for a clone that may never be.
impl Clone for ChatLayoutCache {
    fn clone(&self) -> ChatLayoutCache {
        ChatLayoutCache::default()
    }
}

impl fmt::Debug for ChatLayoutCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.try_lock() {
            Ok(l) => f
                .debug_struct("ChatLayoutCache")
                .field("key", &l.key)
                .field("items", &l.items.len())
                .field("rows", &l.len())
                .finish(),
            Err(_) => f.write_str("ChatLayoutCache { .. }"),
        }
    }
}

#[cfg(test)]
#[path = "layout_tests.rs"]
mod tests;

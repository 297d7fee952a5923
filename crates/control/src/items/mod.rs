//! The session's view as typed items (protocol `Item`): built from the log and the checkpoint
//! store for a snapshot ([`build`]), and made live while a turn runs ([`live`]). Both make the same
//! items with the same ids, so a frontend that renders a snapshot and then the events after it
//! shows what a fresh snapshot would.
//!
//! Ids: a prompt, an assistant text and a note are named by their message id; a tool call by its
//! assistant message's id and its place in that message's calls (`<message id>.<n>`); a turn's
//! checkpoint by its number (`checkpoint-<turn>`).

pub(crate) mod build;
mod list;
pub(crate) mod live;
mod wording;

pub(crate) use build::items_of;
pub use list::{Applied, ItemList};
pub(crate) use live::LiveTurn;
pub(crate) use wording::note as note_wording;

/// The id of the `n`th tool call of the assistant message `message`.
pub(crate) fn tool_item_id(message: &str, n: usize) -> String {
    format!("{message}.{n}")
}

/// The id of a turn's checkpoint item.
pub(crate) fn checkpoint_item_id(turn: u64) -> String {
    format!("checkpoint-{turn}")
}

//! The session log: one conversation with many heads, in an append-only JSON Lines file.
//!
//! A session `<id>` lives in the sessions directory as `<id>.jsonl` (the log), `<id>.lease` (the
//! writer lease), after a crash `<id>.torn-<n>` (torn tails cut off the log) and after a repair
//! `<id>.damaged-<n>` (lines the repair moved out of the log). SPEC §6 and
//! `docs/FORMATS.md` ("Session log") define the format.
//!
//! **Design.** The log is only ever appended to: a header, then entries (`message`, `turn`, `fork`,
//! `select`, `retire`, `summary`, `note`). Opening a session replays it into an in-memory index:
//! every message once, and each head as a short list of segments — ranges of some head's own
//! messages. Forking copies the segment list of its source up to the fork point (O(forks in the
//! ancestry), not O(messages)) and appends one line; projecting a head walks its segments (O(path
//! length)); a summary head is one line that reuses the source's prefix or suffix. Rewinds never
//! truncate: they fork. Turns are numbered across heads and never reused; a turn is *visible* on a
//! head when its user message is on the head's path, and its *boundary* there is the number of
//! messages before that user message.
//!
//! **Durability.** One process writes ([`Lease`]: `flock` on `<id>.lease` and on the log itself). A session is created
//! atomically (temp file, fsync, rename); a turn's user message, notes and structural entries
//! (fork, select, retire, summary) are fsynced as they are written; other messages are fsynced at
//! [`Session::end_turn`]. A crash can leave a torn last line: readers ignore it with a warning, and
//! the next writer keeps its bytes aside and cuts it off before appending. Any other bad line is an
//! error naming the file and the line; opened tolerantly, such a session holds what came before
//! the line and takes no write until [`SessionOptions::repair`] moves the bad lines aside.
//!
//! **Format 1.** Flat logs of an older version (one `{role, content}` per line) open as one head
//! `main` whose turn N is its N-th user message, or where their checkpoint sidecar records it
//! ([`Session::anchor_format1_turns`]). They are never written: a write creates a new format-2
//! session (header `forked_from`) and the open [`Session`] becomes it.
//!
//! **Forks into a new workspace.** [`Session::copy_into_new`] makes a new session whose `main` is a
//! copy of a head's path up to a turn (header `forked_from` with the turn, the head and the
//! directory made for it); the source is only read.
//!
//! **What it trades away.** Opening reads and replays the whole log (a 7 MB, 10,000-message log in
//! about 20 ms; see the benchmarks), and the whole conversation is kept in memory. Nothing is
//! ever compacted: retired heads and abandoned branches cost their bytes forever. Messages inside a
//! turn are not fsynced one by one, so a power loss mid-turn can lose that turn's tail (SPEC §1.5).

mod copy;
mod diffs;
pub mod entry;
mod error;
mod ids;
mod index;
mod lease;
mod legacy;
mod list;
mod log;
mod migrate;
mod names;
mod options;
mod record;
mod repair;
mod session;
mod spent;
mod summary;
mod view;
mod write;

pub use copy::SessionCopy;
pub use diffs::{diffs_path, StoredDiffs};
pub use entry::{
    Entry, ForkEntry, ForkedFrom, HeadEvent, HeadKind, Header, MadeDir, MessageEntry, ModelEntry, NoteEntry,
    PathRange, PlanModeEntry, Role, SummaryEntry, SummaryMode, ToolCall, TurnEntry, FORMAT,
};
pub use error::{Result, SessionError};
pub use ids::{HeadId, MessageId, SessionId, MAIN_HEAD};
pub use lease::{lease_path, Holder, Lease};
pub use list::{list_sessions, other_writers, writers_since, ListProblem, SessionList, SessionListing};
pub use names::MAX_HEAD_NAME;
pub use options::{route_warnings, Clock, IdSource, SessionOptions, WarningSink};
pub use record::StoredOutcome;
pub use repair::{damaged_path, LogDamage, MovedLine, Repaired, PLACEHOLDER_TEXT, TOOL_PLACEHOLDER_TEXT};
pub use session::Session;
pub use spent::Spent;
pub use summary::SummarySpec;
pub use view::{Boundary, HeadInfo, Message, MessageKind, TurnInfo, TurnOnHead};
pub use write::{Appended, ForkSpec, NewHead, NewMessage, TurnStart, TurnStarted};

//! The git-backed mode's object store (SPEC §4, the `git` backend): the whole workspace kept as
//! blobs of a private bare git repository beside the session's sidecar, never the user's own
//! `.git`. A snapshot names every file the walk sees by its blob id and mode; a stat cache
//! (`statcache.rs`) lets a snapshot re-hash only what changed; two snapshots compared
//! (`changes.rs`) say what a shell command did, and the blobs give back each changed file's
//! bytes as they were, for the checkpoint store to keep as before-images.
//!
//! The store is a cache, not a record: what a restore needs is copied into the checkpoint store
//! (durable, checked) as soon as a change is found. A lost or damaged object store costs a full
//! re-hash, never a wrong restore: every blob read back is checked against its id.

mod changes;
mod error;
mod fsck;
mod objects;
mod pack;
mod refresh;
mod snapshot;
mod statcache;
mod walk;
mod watch;

pub use changes::{changes, FileChange, Side};
pub use error::{GitStoreError, Result};
pub use fsck::{fsck, StoreProblem};
pub use objects::{ObjectId, Objects};
pub use snapshot::{Entry, Limits, Skip, SkipReason, Snapshot, SnapshotStats, Snapshotter};
pub use statcache::{Stamp, StatCache, RACY_MARGIN_NS};
pub use walk::{Found, PlainWalk, Step, Walk};
pub use watch::Dirty;

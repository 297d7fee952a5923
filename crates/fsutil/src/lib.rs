//! File-system primitives every Retrace store shares.
//!
//! - [`Fs`]: the durable-write layer. Every write that must survive a crash goes through it, so that
//!   tests can (a) switch fsync off to keep property tests fast and (b) inject a crash at the k-th
//!   durable step to prove that every ordering is recoverable. Production code uses [`Fs::durable`].
//! - [`relpath`]: workspace-relative paths, normalised so `./a`, `a` and `<root>/a` are one path, with
//!   raw bytes kept for non-UTF-8 names.
//! - [`nofollow`]: creating, listing and removing directories in a workspace without following a
//!   symlink.
//! - [`place`]: putting a file, a symlink or a directory's mode into a tree without following a
//!   symlink (a copy of a workspace).
//! - [`open`]: opening for reading without blocking (FIFOs), the type taken from what was opened.
//! - [`git`]: the git branch a workspace is on, read from its `.git` (no `git` binary).
//! - [`hash`]: streaming SHA-256 and copy-while-hashing, so no file is ever read whole into memory.
//!
//! What it trades away: directory fsync is issued per directory touched, not coalesced across calls;
//! callers that write many files batch them with [`Fs::sync_file`] and one [`Fs::sync_dir`].

pub mod durable;
pub mod fault;
pub mod git;
pub mod hash;
pub mod names;
pub mod nofollow;
pub mod open;
pub mod place;
pub mod pool;
pub mod relpath;
pub mod remove_tree;

pub use durable::{Fs, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE};
pub use fault::FaultInjector;
pub use git::{completed_git_dir, git_branch, holds_repository, is_git_dir, GitDirs, GIT_DIR_PIECES};
pub use hash::{copy_hashed, hash_reader, hex, is_sha256_hex, sha256_bytes, HashedCopy};
pub use names::{sibling_name, tool_temp_name, tool_temp_owner, NAME_MAX};
pub use nofollow::{
    create_dirs_nofollow, dirs_above_are_plain, list_dir_nofollow, remove_empty_dir_nofollow,
    remove_file_nofollow, DirAt, Removal,
};
pub use open::{kind_of, open_read, open_regular, open_regular_nofollow, read_regular, read_regular_string};
pub use place::{place_dir, place_file, place_symlink};
pub use relpath::{PathError, RelPath};
pub use remove_tree::remove_tree_one_mount;

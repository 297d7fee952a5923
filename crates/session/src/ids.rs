//! Identifiers: sessions, heads and messages, each a distinct string type.
//!
//! New ids come from a [`crate::IdSource`] (UUIDv7 by default, a seeded counter in tests):
//! - a session id is the hyphenated UUID (`0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41`), also the stem
//!   of its file names, so sessions sort by creation time;
//! - a message id is the hyphenated UUID too: unique across sessions, so a checkpoint record's
//!   `messageId` can never be confused with a later message, even after a torn tail was cut;
//! - a head id is `h-` and eight hex digits (the UUID's low, random bits), short enough to type
//!   after `/switch`; a collision within the session draws again. The first head is always `main`.
//!
//! Format-1 logs have no ids: their messages are named `f1-<line>` after their 1-based line.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps an id read from elsewhere (a log, a command line).
            pub fn new(id: impl Into<String>) -> $name {
                $name(id.into())
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> $name {
                $name(s.to_string())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> $name {
                $name(s)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

string_id!(
    /// A session's id: the stem of `<id>.jsonl`, `<id>.lease` and `<id>.ckpt/`.
    SessionId
);
string_id!(
    /// A head's id, unique within its session. The first head is `main`.
    HeadId
);
string_id!(
    /// A message's id, unique within its session (UUIDv7 text for messages Retrace wrote).
    MessageId
);

/// The id of every session's first head.
pub const MAIN_HEAD: &str = "main";

impl HeadId {
    /// The first head of every session.
    pub fn main() -> HeadId {
        HeadId(MAIN_HEAD.to_string())
    }

    /// The short head id derived from `uuid`: `h-` and its low 32 bits in hex.
    pub(crate) fn short(uuid: Uuid) -> HeadId {
        HeadId(format!("h-{:08x}", uuid.as_u128() as u32))
    }

    /// The long form, used when short ids keep colliding.
    pub(crate) fn long(uuid: Uuid) -> HeadId {
        HeadId(format!("h-{}", uuid.simple()))
    }
}

impl SessionId {
    /// The session id of `uuid`.
    pub(crate) fn from_uuid(uuid: Uuid) -> SessionId {
        SessionId(uuid.hyphenated().to_string())
    }

    /// Whether the id can name files in the sessions directory: not empty, no `/`, no NUL, not
    /// starting with `.` (which also excludes `.` and `..`).
    pub fn is_file_safe(&self) -> bool {
        !self.0.is_empty() && !self.0.starts_with('.') && !self.0.contains('/') && !self.0.contains('\0')
    }
}

impl MessageId {
    /// The message id of `uuid`.
    pub(crate) fn from_uuid(uuid: Uuid) -> MessageId {
        MessageId(uuid.hyphenated().to_string())
    }

    /// The id given to the message on 1-based `line` of a format-1 log.
    pub(crate) fn format1(line: usize) -> MessageId {
        MessageId(format!("f1-{line}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_head_ids_use_the_low_bits() {
        let u = Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        assert_eq!(HeadId::short(u).as_str(), "h-44556677");
        assert_eq!(HeadId::long(u).as_str(), "h-0123456789abcdef0011223344556677");
    }

    #[test]
    fn file_safe_session_ids() {
        for bad in ["", ".", "..", ".hidden", "a/b", "a\0b"] {
            assert!(!SessionId::new(bad).is_file_safe(), "{bad:?}");
        }
        assert!(SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41").is_file_safe());
        assert!(SessionId::new("old-session").is_file_safe());
    }
}

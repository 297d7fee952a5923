//! Identifiers: sessions, heads and messages, each a distinct string type. They serialise as plain
//! strings. How new ids are drawn (UUIDv7, short head ids) is the session log's business; these
//! types only carry them.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Wraps an id read from elsewhere (a log, a command line, a request).
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

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
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
    /// A message's id, unique within its session.
    MessageId
);

/// The id of every session's first head.
pub const MAIN_HEAD: &str = "main";

impl HeadId {
    /// The first head of every session.
    pub fn main() -> HeadId {
        HeadId(MAIN_HEAD.to_string())
    }
}

impl SessionId {
    /// Whether the id can name files in the sessions directory: not empty, no `/`, no NUL, not
    /// starting with `.` (which also excludes `.` and `..`).
    pub fn is_file_safe(&self) -> bool {
        !self.0.is_empty() && !self.0.starts_with('.') && !self.0.contains('/') && !self.0.contains('\0')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_safe_session_ids() {
        for bad in ["", ".", "..", ".hidden", "a/b", "a\0b"] {
            assert!(!SessionId::new(bad).is_file_safe(), "{bad:?}");
        }
        assert!(SessionId::new("0196b1c4-3f2e-7a10-8c55-0e6f3c2b9d41").is_file_safe());
        assert!(SessionId::new("old-session").is_file_safe());
    }
}

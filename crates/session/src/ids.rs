//! Identifiers: the types are `retrace-protocol`'s ([`SessionId`], [`HeadId`], [`MessageId`]); this
//! module draws new ones.
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

pub use retrace_protocol::{HeadId, MessageId, SessionId, MAIN_HEAD};
use uuid::Uuid;

/// The short head id derived from `uuid`: `h-` and its low 32 bits in hex.
pub(crate) fn short_head(uuid: Uuid) -> HeadId {
    HeadId::new(format!("h-{:08x}", uuid.as_u128() as u32))
}

/// The long form, used when short ids keep colliding.
pub(crate) fn long_head(uuid: Uuid) -> HeadId {
    HeadId::new(format!("h-{}", uuid.simple()))
}

/// The session id of `uuid`.
pub(crate) fn session_of(uuid: Uuid) -> SessionId {
    SessionId::new(uuid.hyphenated().to_string())
}

/// The message id of `uuid`.
pub(crate) fn message_of(uuid: Uuid) -> MessageId {
    MessageId::new(uuid.hyphenated().to_string())
}

/// The id given to the message on 1-based `line` of a format-1 log.
pub(crate) fn format1_message(line: usize) -> MessageId {
    MessageId::new(format!("f1-{line}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_head_ids_use_the_low_bits() {
        let u = Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        assert_eq!(short_head(u).as_str(), "h-44556677");
        assert_eq!(long_head(u).as_str(), "h-0123456789abcdef0011223344556677");
    }
}

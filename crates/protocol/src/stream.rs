//! What a subscription to a session's events delivers: numbered events, and an explicit signal
//! when some were missed.

use serde::{Deserialize, Serialize};

use crate::event::Event;

/// An event with its per-session sequence number (SSE sends it as the `id:`). Numbers grow by one
/// per event, and each opening of a session starts above every number an earlier opening used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Numbered {
    /// The sequence number.
    pub seq: u64,
    /// The event.
    pub event: Event,
}

/// One item of a subscription.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Delivery {
    /// The next event.
    Event(Numbered),
    /// Events were missed: the subscriber fell behind, or asked to resume after a number the replay
    /// buffer no longer reaches (or that this process never published). Re-read the state
    /// (transcript, checkpoints, heads); the events that follow start at `next_seq`.
    Lagged {
        /// The sequence number of the next event this subscription delivers.
        next_seq: u64,
    },
}

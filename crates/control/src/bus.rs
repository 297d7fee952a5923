//! A session's event stream: numbered events, a bounded replay buffer, several subscribers.
//!
//! Every event gets the next sequence number and is kept in a ring of the newest [`ServiceOptions::event_buffer`](crate::ServiceOptions)
//! events (default [`EVENT_BUFFER`]) and sent to every live subscriber through a broadcast channel of
//! the same capacity. Subscribing takes the bus lock, so the replay (events after the number the
//! subscriber gives) and the live stream meet without a gap or a duplicate.
//!
//! Numbers only grow, also across openings of a session: each opening starts above every number an
//! earlier one could have published (its epoch is the time it opened, in milliseconds, times 1024 —
//! an earlier opening would have had to publish over a million events a second to reach it). So a
//! number from another opening (an earlier process, or this one before the session closed) is never
//! taken for one of this opening's events.
//!
//! Nothing is ever dropped silently: a subscriber that falls more than the buffer behind, or asks to
//! resume after a number the buffer no longer holds (or that this opening never published), gets
//! [`Delivery::Lagged`] and then the live stream. It must re-read the state (transcript,
//! checkpoints, heads) it shows.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use retrace_protocol::{Delivery, Event, Numbered};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;

/// Events kept for replay, and the most a subscriber may fall behind before it gets `lagged`.
pub const EVENT_BUFFER: usize = 1024;

/// The largest buffer a service may ask for.
const MAX_BUFFER: usize = 1 << 16;

/// Most slots of the live channel. Its slots are all made when it is (a page fault costs
/// microseconds), so a large buffer is the replay buffer, which grows as events come: a subscriber
/// the channel left behind catches up from it, and is told `lagged` only past it.
const LIVE_SLOTS: usize = 1024;

/// The epoch of an opening now: milliseconds since 1970 times 1024.
fn epoch_now() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    ms.saturating_mul(1024)
}

struct BusState {
    next_seq: u64,
    /// Shared with the channel: an event is stored once however many hold it.
    buffer: VecDeque<Arc<Numbered>>,
    capacity: usize,
    /// `None` once the session closed: subscriptions then end. The channel's slots are made all
    /// at once when it is: a pointer each keeps a large buffer cheap to open.
    tx: Option<broadcast::Sender<Arc<Numbered>>>,
}

/// The event stream of one session.
pub(crate) struct EventBus {
    state: Arc<Mutex<BusState>>,
}

impl EventBus {
    /// A bus that keeps `capacity` events (1 to 2^16), numbered from this opening's epoch.
    pub(crate) fn new(capacity: usize) -> EventBus {
        EventBus::from_epoch(capacity, epoch_now())
    }

    /// A bus whose first event is numbered `epoch + 1`.
    pub(crate) fn from_epoch(capacity: usize, epoch: u64) -> EventBus {
        let capacity = capacity.clamp(1, MAX_BUFFER);
        let (tx, _) = broadcast::channel(capacity.min(LIVE_SLOTS));
        EventBus {
            state: Arc::new(Mutex::new(BusState {
                next_seq: epoch.saturating_add(1),
                buffer: VecDeque::new(),
                capacity,
                tx: Some(tx),
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BusState> {
        lock(&self.state)
    }

    /// Numbers `event`, keeps it for replay and sends it to every subscriber.
    pub(crate) fn publish(&self, event: Event) {
        let mut s = self.lock();
        let numbered = Arc::new(Numbered {
            seq: s.next_seq,
            event,
        });
        s.next_seq += 1;
        if s.buffer.len() == s.capacity {
            s.buffer.pop_front();
        }
        s.buffer.push_back(Arc::clone(&numbered));
        if let Some(tx) = &s.tx {
            // No receiver is not an error: the event stays in the buffer for later subscribers.
            let _ = tx.send(numbered);
        }
    }

    /// The number of the newest event (the epoch before the first).
    pub(crate) fn last_seq(&self) -> u64 {
        self.lock().next_seq - 1
    }

    /// Ends every subscription once it has delivered what was published.
    pub(crate) fn close(&self) {
        self.lock().tx = None;
    }

    /// A subscription: with `after`, the events numbered after it first (or `lagged` when the buffer
    /// no longer reaches back), then the live stream; without, the live stream only.
    pub(crate) fn subscribe(&self, after: Option<u64>) -> Subscription {
        let s = self.lock();
        let rx = s.tx.as_ref().map(broadcast::Sender::subscribe);
        let last = s.next_seq - 1;
        let oldest = s.buffer.front().map_or(s.next_seq, |e| e.seq);
        let mut sub = Subscription {
            state: Arc::clone(&self.state),
            replay: VecDeque::new(),
            rx,
            next: s.next_seq,
            lagged: None,
        };
        match after {
            None => {}
            Some(a) if a > last || a.saturating_add(1) < oldest => sub.lagged = Some(s.next_seq),
            Some(a) => {
                sub.replay = s.buffer.iter().filter(|e| e.seq > a).cloned().collect();
                sub.next = a + 1;
            }
        }
        sub
    }
}

/// A subscription to a session's events: numbered events in order, and `lagged` where some were
/// missed. Dropping it affects nothing else.
pub struct Subscription {
    /// The bus's state: where a subscriber the live channel left behind catches up from.
    state: Arc<Mutex<BusState>>,
    replay: VecDeque<Arc<Numbered>>,
    rx: Option<broadcast::Receiver<Arc<Numbered>>>,
    /// The number of the next event this subscription delivers.
    next: u64,
    /// A `lagged` signal to deliver first, with the next number.
    lagged: Option<u64>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// The next delivery; `None` once the session is closed and everything was delivered.
    pub async fn recv(&mut self) -> Option<Delivery> {
        if let Some(next_seq) = self.lagged.take() {
            self.next = next_seq;
            return Some(Delivery::Lagged { next_seq });
        }
        loop {
            if let Some(e) = self.replay.pop_front() {
                self.next = e.seq + 1;
                return Some(Delivery::Event(Arc::unwrap_or_clone(e)));
            }
            let got = match self.rx.as_mut()?.recv().await {
                Ok(e) => e,
                Err(RecvError::Closed) => return None,
                Err(RecvError::Lagged(_)) => {
                    if let Some(next_seq) = self.catch_up() {
                        return Some(Delivery::Lagged { next_seq });
                    }
                    continue;
                }
            };
            // The replay already delivered what the live stream repeats.
            if got.seq >= self.next {
                self.next = got.seq + 1;
                return Some(Delivery::Event(Arc::unwrap_or_clone(got)));
            }
        }
    }

    /// After the live channel dropped events for this subscriber: the events it missed, taken
    /// from the replay buffer (never shorter than the channel, so it holds them, or newer ones).
    /// Returns the number the stream goes on from when the buffer no longer reaches back to the
    /// next one: the subscriber lagged.
    fn catch_up(&mut self) -> Option<u64> {
        self.replay = lock(&self.state)
            .buffer
            .iter()
            .filter(|e| e.seq >= self.next)
            .cloned()
            .collect();
        let first = self.replay.front()?.seq;
        (first > self.next).then(|| {
            self.next = first;
            first
        })
    }
}

fn lock(state: &Mutex<BusState>) -> std::sync::MutexGuard<'_, BusState> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(n: u64) -> Event {
        Event::Notice {
            message: n.to_string(),
            retry: None,
        }
    }

    async fn seqs(sub: &mut Subscription, n: usize) -> Vec<Delivery> {
        let mut out = Vec::new();
        for _ in 0..n {
            out.push(sub.recv().await.unwrap());
        }
        out
    }

    fn seq(d: &Delivery) -> u64 {
        match d {
            Delivery::Event(e) => e.seq,
            Delivery::Lagged { .. } => 0,
        }
    }

    #[tokio::test]
    async fn replay_then_live_without_gap_or_duplicate() {
        let bus = EventBus::from_epoch(8, 0);
        for n in 1..=3 {
            bus.publish(note(n));
        }
        let mut sub = bus.subscribe(Some(1));
        bus.publish(note(4));
        let got = seqs(&mut sub, 3).await;
        assert_eq!(got.iter().map(seq).collect::<Vec<_>>(), [2, 3, 4]);
        let mut live = bus.subscribe(None);
        bus.publish(note(5));
        assert_eq!(seq(&live.recv().await.unwrap()), 5);
    }

    #[tokio::test]
    async fn too_old_or_unknown_numbers_lag() {
        let bus = EventBus::from_epoch(4, 0);
        for n in 1..=10 {
            bus.publish(note(n));
        }
        let mut old = bus.subscribe(Some(2));
        assert_eq!(old.recv().await, Some(Delivery::Lagged { next_seq: 11 }));
        let mut future = bus.subscribe(Some(99));
        assert_eq!(future.recv().await, Some(Delivery::Lagged { next_seq: 11 }));
        // The oldest number still held resumes exactly.
        let mut edge = bus.subscribe(Some(6));
        assert_eq!(seq(&edge.recv().await.unwrap()), 7);
    }

    #[tokio::test]
    async fn a_slow_subscriber_is_told_it_lagged() {
        let bus = EventBus::from_epoch(4, 0);
        let mut slow = bus.subscribe(None);
        for n in 1..=10 {
            bus.publish(note(n));
        }
        match slow.recv().await.unwrap() {
            Delivery::Lagged { next_seq } => {
                assert!(next_seq > 1);
                assert_eq!(seq(&slow.recv().await.unwrap()), next_seq);
            }
            other => panic!("expected lagged, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_subscriber_past_the_live_channel_catches_up_from_the_replay_buffer() {
        let bus = EventBus::from_epoch(LIVE_SLOTS * 4, 0);
        let mut slow = bus.subscribe(None);
        let n = (LIVE_SLOTS * 3) as u64;
        for i in 1..=n {
            bus.publish(note(i));
        }
        let got = seqs(&mut slow, n as usize).await;
        assert_eq!(
            got.iter().map(seq).collect::<Vec<_>>(),
            (1..=n).collect::<Vec<_>>()
        );
        bus.publish(note(n + 1));
        assert_eq!(seq(&slow.recv().await.unwrap()), n + 1);
        // Past the replay buffer too: `lagged`, then the oldest event it holds.
        let mut slower = bus.subscribe(None);
        for i in 1..=(LIVE_SLOTS * 5) as u64 {
            bus.publish(note(n + 1 + i));
        }
        match slower.recv().await.unwrap() {
            Delivery::Lagged { next_seq } => {
                assert_eq!(seq(&slower.recv().await.unwrap()), next_seq);
            }
            other => panic!("expected lagged, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_later_opening_numbers_above_an_earlier_one() {
        let first = EventBus::new(4);
        for n in 1..=100 {
            first.publish(note(n));
        }
        let seen = first.last_seq();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = EventBus::new(4);
        assert!(second.last_seq() > seen);
        second.publish(note(1));
        let mut old = second.subscribe(Some(seen));
        assert!(matches!(old.recv().await, Some(Delivery::Lagged { .. })));
        // An absurd buffer is bounded, not a panic.
        let big = EventBus::new(usize::MAX);
        big.publish(note(1));
    }

    #[tokio::test]
    async fn closing_ends_subscriptions_after_what_was_published() {
        let bus = EventBus::from_epoch(4, 0);
        let mut sub = bus.subscribe(None);
        bus.publish(note(1));
        bus.close();
        assert_eq!(seq(&sub.recv().await.unwrap()), 1);
        assert_eq!(sub.recv().await, None);
    }
}

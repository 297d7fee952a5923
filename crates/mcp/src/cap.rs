//! The size of one message from a server, capped: a stdio server's line, a streamable HTTP
//! server's JSON body or server-sent event line. Past [`MAX_MESSAGE_BYTES`] the stream fails
//! (the SDK would otherwise hold the whole message, and a copy or two of it, in memory) and the
//! connection's [`Tripwire`] says why, so the call fails with [`McpError::TooLarge`] and the
//! server is started again at its next call.
//!
//! [`McpError::TooLarge`]: crate::McpError::TooLarge

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::Notify;

/// The largest message taken from a server, in bytes (a line of a stdio server, a JSON body or an
/// event's line of a server over HTTP).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// Set once a server sent a message past the cap.
#[derive(Debug, Default)]
pub(crate) struct Tripwire {
    tripped: AtomicBool,
    notify: Notify,
}

impl Tripwire {
    /// Marks the connection as having received a message past the cap.
    pub(crate) fn trip(&self) {
        self.tripped.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Whether it tripped.
    pub(crate) fn is_tripped(&self) -> bool {
        self.tripped.load(Ordering::SeqCst)
    }

    /// Completes once it tripped.
    pub(crate) async fn tripped(&self) {
        loop {
            let notified = self.notify.notified();
            if self.is_tripped() {
                return;
            }
            notified.await;
        }
    }
}

/// Counts the bytes of the line being read, across chunks.
#[derive(Debug, Default)]
pub(crate) struct LineCounter {
    since_newline: usize,
}

impl LineCounter {
    /// Takes `chunk` into account: `false` when a line in it (with what came before it) is past
    /// `cap` bytes.
    pub(crate) fn take(&mut self, chunk: &[u8], cap: usize) -> bool {
        let mut lines = chunk.split(|b| *b == b'\n');
        let first = lines.next().map_or(0, <[u8]>::len);
        self.since_newline += first;
        if self.since_newline > cap {
            return false;
        }
        for line in lines {
            if line.len() > cap {
                return false;
            }
            self.since_newline = line.len();
        }
        true
    }
}

/// A reader whose lines may not pass `cap` bytes: past it, an error (and the tripwire tripped).
pub(crate) struct CappedLines<R> {
    inner: R,
    cap: usize,
    counter: LineCounter,
    wire: Arc<Tripwire>,
}

impl<R> CappedLines<R> {
    pub(crate) fn new(inner: R, cap: usize, wire: Arc<Tripwire>) -> CappedLines<R> {
        CappedLines {
            inner,
            cap,
            counter: LineCounter::default(),
            wire,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for CappedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.wire.is_tripped() {
            return Poll::Ready(Err(too_large(self.cap)));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let cap = this.cap;
                if !this.counter.take(&buf.filled()[before..], cap) {
                    this.wire.trip();
                    // A read that fails gives nothing.
                    buf.set_filled(before);
                    return Poll::Ready(Err(too_large(cap)));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

/// The error a stream past the cap fails with.
pub(crate) fn too_large(cap: usize) -> std::io::Error {
    std::io::Error::other(format!("a message of more than {cap} bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_counted_across_chunks() {
        let mut c = LineCounter::default();
        assert!(c.take(b"12345", 8));
        assert!(c.take(b"678\n1234", 8));
        assert!(!c.take(b"56789", 8), "9 bytes since the last newline");
        let mut c = LineCounter::default();
        assert!(!c.take(b"1\n123456789\n1", 8), "a whole line in the chunk");
        let mut c = LineCounter::default();
        assert!(c.take(b"12345678\n12345678\n", 8));
    }

    #[tokio::test]
    async fn a_reader_fails_past_the_cap_and_trips() {
        use tokio::io::AsyncReadExt;
        let wire = Arc::new(Tripwire::default());
        let mut r = CappedLines::new(&b"short\nmuch too long a line\n"[..], 8, wire.clone());
        let mut out = Vec::new();
        let e = r.read_to_end(&mut out).await.unwrap_err();
        assert!(e.to_string().contains("more than 8 bytes"), "{e}");
        assert!(wire.is_tripped());
        wire.tripped().await;
    }
}

//! [`WriteDeadline`]: a connection whose writes must make progress. A client that stops reading
//! (its receive window full) leaves the server's writes pending forever, and with them the
//! connection and its slot under the cap; this one fails such a write with `TimedOut` once it
//! has waited the deadline, and hyper then closes the connection. An event stream to a client
//! that reads is never cut: each write completes.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// `T` whose writes (and flushes) fail after `limit` without progress.
pub(crate) struct WriteDeadline<T> {
    inner: T,
    limit: Duration,
    timer: Pin<Box<Sleep>>,
    /// Whether a write is waiting (the timer then runs).
    waiting: bool,
}

impl<T> WriteDeadline<T> {
    pub(crate) fn new(inner: T, limit: Duration) -> WriteDeadline<T> {
        WriteDeadline {
            inner,
            limit,
            timer: Box::pin(tokio::time::sleep(limit)),
            waiting: false,
        }
    }

    /// What a write that made progress, or not, answers.
    fn progress<R>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        match r {
            Poll::Ready(r) => {
                self.waiting = false;
                Poll::Ready(r)
            }
            Poll::Pending => {
                if !self.waiting {
                    self.waiting = true;
                    self.timer.as_mut().reset(Instant::now() + self.limit);
                }
                match self.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client read nothing of the answer in time",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for WriteDeadline<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<T> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.progress(cx, r)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.progress(cx, r)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.progress(cx, r)
    }
}

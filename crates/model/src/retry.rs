//! When to try a request again, and how long to wait first.
//!
//! Exponential backoff from a base delay, doubled per attempt and capped; a server's `Retry-After`
//! (seconds, whole or decimal) or `retry-after-ms` (OpenAI's, milliseconds) replaces the computed
//! delay, under the same cap ([`RetryPolicy::max_delay`], 60 s by default: a server asking for more
//! is tried again after 60 s, and the attempts may run out — better than a turn silent for an hour). No jitter: one interactive client does
//! not make a thundering herd, and a fixed schedule keeps tests deterministic. Waiting is cancellable.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::ModelError;

/// How many attempts a request gets and how long to wait between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (at least 1 is made whatever this says).
    pub max_attempts: u32,
    /// The wait after the first failure; doubled after each further one.
    pub base_delay: Duration,
    /// No wait is longer than this, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Four attempts, waiting 1 s, 2 s, 4 s (at most 60 s).
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait after failed attempt number `attempt` (1-based), given the server's `Retry-After`.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let computed = || {
            let shift = attempt.saturating_sub(1).min(20);
            self.base_delay.saturating_mul(1u32 << shift)
        };
        retry_after.unwrap_or_else(computed).min(self.max_delay)
    }
}

/// Sleeps for `delay` unless `cancel` fires first.
pub(crate) async fn wait(delay: Duration, cancel: &CancellationToken) -> Result<(), ModelError> {
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ModelError::Cancelled),
        () = tokio::time::sleep(delay) => Ok(()),
    }
}

/// OpenAI's header giving the wait in milliseconds, preferred to `Retry-After` when both come.
pub(crate) const RETRY_AFTER_MS: &str = "retry-after-ms";

/// Parses a `Retry-After` header given in seconds, whole or decimal (the HTTP-date form is
/// ignored: backoff applies).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs = value.trim().parse::<f64>().ok()?;
    // A number too large for f64 (`1e309`) is infinite: still "wait long", so the cap applies.
    (!secs.is_nan() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
}

/// Parses a `retry-after-ms` header (milliseconds, whole or decimal).
pub(crate) fn parse_retry_after_ms(value: &str) -> Option<Duration> {
    parse_retry_after(value).map(|d| d / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_infinite_retry_after_is_a_long_wait() {
        assert_eq!(
            parse_retry_after("1e309"),
            Some(Duration::from_secs(1_000_000_000))
        );
        assert_eq!(parse_retry_after("NaN"), None);
        assert_eq!(parse_retry_after("-1"), None);
    }

    #[test]
    fn delays_double_and_are_capped() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        let ms = |a| p.delay(a, None).as_millis();
        assert_eq!([ms(1), ms(2), ms(3), ms(4), ms(40)], [100, 200, 400, 500, 500]);
    }

    #[test]
    fn retry_after_replaces_the_backoff_under_the_cap() {
        let p = RetryPolicy::default();
        assert_eq!(p.delay(3, Some(Duration::from_secs(2))), Duration::from_secs(2));
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(3600))),
            Duration::from_secs(60)
        );
        assert_eq!(parse_retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(parse_retry_after_ms("250"), Some(Duration::from_millis(250)));
    }
}

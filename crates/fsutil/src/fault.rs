//! Crashes and failures injected at durable steps, for tests: the k-th step of a [`crate::Fs`]
//! (each write, rename, fsync … calls [`crate::Fs::step`] first) fails, and every one after it,
//! as if the process had died there; or fails once and lets the rest through (a full disk); or
//! runs an action there (another process acting at that very moment).

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A closure a test runs at one step (see [`FaultInjector::act_at`]).
type Action = Box<dyn FnMut() + Send>;

/// Fails the k-th durable step and every later one, as if the process had died there.
#[derive(Default)]
pub struct FaultInjector {
    crash_at: AtomicU64,
    counter: AtomicU64,
    crashed: AtomicBool,
    /// Fail step `crash_at` only, as an I/O error the process lives through (a full disk, EIO).
    once: bool,
    trail: Mutex<Vec<String>>,
    /// Run at one step, which then goes through: another process acting at that very moment.
    action: Mutex<Option<(u64, Action)>>,
}

impl std::fmt::Debug for FaultInjector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultInjector")
            .field("crash_at", &self.crash_at)
            .field("counter", &self.counter)
            .field("crashed", &self.crashed)
            .field("once", &self.once)
            .finish_non_exhaustive()
    }
}

impl FaultInjector {
    /// An injector that crashes at step `k` (1-based). `k = 0` never crashes and only counts.
    pub fn crash_at(k: u64) -> Arc<FaultInjector> {
        Arc::new(FaultInjector {
            crash_at: AtomicU64::new(k),
            ..FaultInjector::default()
        })
    }

    /// An injector that fails step `k` (1-based) with an I/O error and lets every other step
    /// through: the process lives on and must decide what the failure means.
    pub fn fail_once_at(k: u64) -> Arc<FaultInjector> {
        Arc::new(FaultInjector {
            crash_at: AtomicU64::new(k),
            once: true,
            ..FaultInjector::default()
        })
    }

    /// An injector that runs `action` just before step `k` (1-based) and fails nothing: what
    /// another process (an editor, the user) does at that moment, for race tests.
    pub fn act_at(k: u64, action: impl FnMut() + Send + 'static) -> Arc<FaultInjector> {
        Arc::new(FaultInjector {
            action: Mutex::new(Some((k, Box::new(action)))),
            ..FaultInjector::default()
        })
    }

    /// Steps seen so far.
    pub fn steps(&self) -> u64 {
        self.counter.load(Ordering::SeqCst)
    }

    /// Whether the crash happened.
    pub fn crashed(&self) -> bool {
        self.crashed.load(Ordering::SeqCst)
    }

    /// Labels of the steps seen, in order (for test diagnostics).
    pub fn trail(&self) -> Vec<String> {
        self.trail.lock().map(|t| t.clone()).unwrap_or_default()
    }

    pub(crate) fn step(&self, label: &str) -> io::Result<()> {
        if self.crashed() {
            return Err(io::Error::other(format!(
                "injected crash (already dead) before {label}"
            )));
        }
        let n = self.counter.fetch_add(1, Ordering::SeqCst) + 1;
        if let Ok(mut t) = self.trail.lock() {
            t.push(label.to_string());
        }
        if let Ok(mut a) = self.action.lock() {
            if let Some((k, act)) = a.as_mut() {
                if *k == n {
                    act();
                }
            }
        }
        if n == self.crash_at.load(Ordering::SeqCst) {
            if self.once {
                return Err(io::Error::other(format!(
                    "injected I/O error at step {n}: {label}"
                )));
            }
            self.crashed.store(true, Ordering::SeqCst);
            return Err(io::Error::other(format!("injected crash at step {n}: {label}")));
        }
        Ok(())
    }
}

//! A small pool of long-lived helper threads for the work a store overlaps with its own: hashing a
//! payload while it is copied, fsyncing a batch while the record is written.
//!
//! Why not a thread per job: starting a thread costs 50–250 µs on the machines BENCHMARKS.md
//! describes, about as much as the fsync it would hide, and the new thread starts running only after
//! that. An idle pool thread is woken in a few microseconds.
//!
//! Threads are started on demand, up to [`MAX_THREADS`], and then stay (idle threads sleep on a
//! condition variable). Beyond that jobs wait in order for a free thread. A job that panics is
//! reported to whoever waits for it, and the thread goes on.

use std::collections::VecDeque;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock};

/// Most threads the pool starts.
pub const MAX_THREADS: usize = 16;

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    idle: usize,
    threads: usize,
}

struct Pool {
    state: Mutex<State>,
    wake: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        wake: Condvar::new(),
    })
}

/// A job handed to the pool; [`Task::join`] waits for its result.
#[must_use = "a task's result is only known by joining it"]
pub struct Task<T> {
    rx: mpsc::Receiver<T>,
}

impl<T> Task<T> {
    /// Waits for the job. `None` if it panicked.
    pub fn join(self) -> Option<T> {
        self.rx.recv().ok()
    }
}

/// Runs `f` on a pool thread: an idle one, else a new one while there are fewer than
/// [`MAX_THREADS`], else the first to be free. If a thread is needed and cannot be started, `f` runs
/// here, now, before this returns — so `f` must not wait for anything the caller does next (use
/// [`try_run`] for that).
pub fn run<T, F>(f: F) -> Task<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (job, task) = package(f);
    if let Err(job) = submit(job) {
        job();
    }
    task
}

/// Like [`run`], but `None` (and `f` dropped, never run) when no thread can be had: for a job that
/// waits for its caller, such as one fed through a channel.
pub fn try_run<T, F>(f: F) -> Option<Task<T>>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (job, task) = package(f);
    submit(job).ok().map(|()| task)
}

fn package<T, F>(f: F) -> (Job, Task<T>)
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        if let Ok(v) = catch_unwind(AssertUnwindSafe(f)) {
            let _ = tx.send(v);
        }
    });
    (job, Task { rx })
}

/// Hands `job` to a thread, or gives it back when none can be had.
fn submit(job: Job) -> Result<(), Job> {
    let p = pool();
    let Ok(mut st) = p.state.lock() else {
        // Poisoned (a panic while holding the lock, which no code here does).
        return Err(job);
    };
    if st.idle > 0 {
        st.jobs.push_back(job);
        drop(st);
        p.wake.notify_one();
        return Ok(());
    }
    if st.threads >= MAX_THREADS {
        st.jobs.push_back(job);
        return Ok(());
    }
    st.threads += 1;
    drop(st);
    // The new thread takes the job with it; the queue is for when every thread is busy. If no
    // thread can be started, the job comes back.
    let slot = Arc::new(Mutex::new(Some(job)));
    let theirs = Arc::clone(&slot);
    let started = std::thread::Builder::new()
        .name("retrace-helper".into())
        .spawn(move || worker(theirs.lock().ok().and_then(|mut j| j.take())));
    if started.is_ok() {
        return Ok(());
    }
    if let Ok(mut st) = p.state.lock() {
        st.threads -= 1;
    }
    match slot.lock().ok().and_then(|mut j| j.take()) {
        Some(job) => Err(job),
        // Unreachable: the thread never started, so nothing took it.
        None => Ok(()),
    }
}

fn worker(first: Option<Job>) {
    if let Some(job) = first {
        job();
    }
    let p = pool();
    loop {
        let job = {
            let Ok(mut st) = p.state.lock() else { return };
            loop {
                if let Some(j) = st.jobs.pop_front() {
                    break j;
                }
                st.idle += 1;
                st = match p.wake.wait(st) {
                    Ok(s) => s,
                    Err(_) => return,
                };
                st.idle -= 1;
            }
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn jobs_run_and_return_their_results() {
        let tasks: Vec<Task<usize>> = (0..40).map(|i| run(move || i * 2)).collect();
        let got: Vec<usize> = tasks.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(got, (0..40).map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn more_blocked_jobs_than_threads_still_all_finish() {
        // Each job waits for the next one's signal, in a chain longer than the pool: the queue
        // must not stall once every thread is busy.
        let done = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<Task<()>> = (0..MAX_THREADS * 3)
            .map(|_| {
                let done = Arc::clone(&done);
                run(move || {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in tasks {
            t.join().unwrap();
        }
        assert_eq!(done.load(Ordering::SeqCst), MAX_THREADS * 3);
    }

    #[test]
    fn a_panicking_job_reports_none_and_the_pool_goes_on() {
        let t = run(|| -> usize { panic!("boom") });
        assert_eq!(t.join(), None);
        assert_eq!(run(|| 7).join(), Some(7));
    }
}

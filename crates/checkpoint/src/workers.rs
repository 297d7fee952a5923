//! Per-file work of a transaction spread over a few threads: making files is most of what a large
//! restore costs, and the kernel makes (and renames) files in different directories side by side.
//!
//! Jobs are sorted by directory and cut into runs that end where a directory does, so a directory
//! is never shared by two threads (each opens it once, and its entries change in one order).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{CheckpointError, Result};

/// Fewest jobs run by more than one thread: below, a thread costs more than it saves.
pub(crate) const PARALLEL_MIN: usize = 32;
/// Most threads.
const MAX_THREADS: usize = 8;

/// How many threads `jobs` jobs get: one below [`PARALLEL_MIN`], else the number of cores, at
/// most [`MAX_THREADS`].
pub(crate) fn threads_for(jobs: usize) -> usize {
    if jobs < PARALLEL_MIN {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, MAX_THREADS)
}

/// How many threads `jobs` jobs that mostly wait get: one below [`PARALLEL_MIN`], else
/// [`MAX_THREADS`] whatever the cores. A rename that replaces a file frees the replaced file's
/// blocks when the last descriptor on it closes, and a file system mounted with `discard` waits
/// for the device there: threads beyond the cores overlap those waits (BENCHMARKS.md, twentieth
/// session: a 1,000-file rewind's renames 60–70 ms on 2 threads, 30–34 ms on 8, 2 cores).
pub(crate) fn threads_for_waits(jobs: usize) -> usize {
    if jobs < PARALLEL_MIN {
        1
    } else {
        MAX_THREADS
    }
}

/// `jobs` (sorted by `key`) in at most `n` runs of about equal length, each ending where `key`
/// changes.
pub(crate) fn split_runs<T, K: PartialEq>(jobs: &[T], n: usize, key: impl Fn(&T) -> &K) -> Vec<&[T]> {
    let mut runs = Vec::new();
    let mut rest = jobs;
    for k in (1..=n.max(1)).rev() {
        if rest.is_empty() {
            break;
        }
        let mut end = rest.len().div_ceil(k);
        while end < rest.len() && key(&rest[end]) == key(&rest[end - 1]) {
            end += 1;
        }
        let (head, tail) = rest.split_at(end);
        runs.push(head);
        rest = tail;
    }
    runs
}

/// Runs `each` on every job of every run, a thread per run (the first on this one), in order
/// within a run, with a state of its own per run (made by `state`: the directories it holds, say).
/// The first error stops every thread at its next job and is returned (of several, the one of the
/// earliest run).
pub(crate) fn run_all<T: Sync, S>(
    runs: &[&[T]],
    state: impl Fn() -> S + Sync,
    each: impl Fn(&mut S, &T) -> Result<()> + Sync,
) -> Result<()> {
    let failed = AtomicBool::new(false);
    let run = |jobs: &[T]| -> Result<()> {
        let mut s = state();
        for job in jobs {
            if failed.load(Ordering::Relaxed) {
                return Ok(());
            }
            if let Err(e) = each(&mut s, job) {
                failed.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    };
    let Some((first, others)) = runs.split_first() else {
        return Ok(());
    };
    if others.is_empty() {
        return run(first);
    }
    let results: Vec<Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = others.iter().map(|jobs| scope.spawn(|| run(jobs))).collect();
        let mut results = vec![run(first)];
        results.extend(handles.into_iter().map(|h| {
            h.join().unwrap_or_else(|_| {
                failed.store(true, Ordering::Relaxed);
                Err(CheckpointError::Io {
                    op: "write",
                    path: std::path::PathBuf::new(),
                    source: std::io::Error::other("a thread of the transaction panicked"),
                })
            })
        }));
        results
    });
    results.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_end_where_a_directory_does_and_cover_every_job() {
        let jobs: Vec<(u32, u32)> = [(1, 0), (1, 1), (1, 2), (2, 3), (3, 4), (3, 5), (4, 6)].into();
        for n in 1..=8 {
            let runs = split_runs(&jobs, n, |j| &j.0);
            assert!(runs.len() <= n);
            assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), jobs.len());
            for w in runs.windows(2) {
                assert_ne!(w[0].last().map(|j| j.0), w[1].first().map(|j| j.0));
            }
        }
        assert_eq!(split_runs(&jobs, 2, |j| &j.0).len(), 2);
    }

    #[test]
    fn work_that_waits_gets_every_thread_once_there_are_many_jobs() {
        assert_eq!(threads_for_waits(PARALLEL_MIN - 1), 1);
        assert_eq!(threads_for_waits(PARALLEL_MIN), MAX_THREADS);
        assert!(threads_for(PARALLEL_MIN) <= MAX_THREADS);
    }

    #[test]
    fn the_first_error_stops_the_others_and_is_returned() {
        let jobs: Vec<u32> = (0..100).collect();
        let runs = split_runs(&jobs, 4, |j| j);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let r = run_all(
            &runs,
            || (),
            |_, j| {
                if *j == 30 {
                    return Err(CheckpointError::NoTurn);
                }
                done.fetch_add(1, Ordering::Relaxed);
                Ok(())
            },
        );
        assert!(matches!(r, Err(CheckpointError::NoTurn)));
        assert!(done.load(Ordering::Relaxed) < 100);
        assert!(run_all(&split_runs(&jobs, 3, |j| j), || (), |_, _| Ok(())).is_ok());
    }
}

//! Clocks, medians, disk usage, and the machine's fsync price.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Runs `f` and returns how long it took with its value.
pub fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(Duration, T)> {
    let start = Instant::now();
    let v = f()?;
    Ok((start.elapsed(), v))
}

/// The median (the mean of the two middle values for an even count); zero when empty.
pub fn median(samples: &[Duration]) -> Duration {
    let mut v = samples.to_vec();
    v.sort();
    match v.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2,
    }
}

/// Writes back every dirty page of the machine (`sync(2)`), untimed, before a measurement, so that
/// no side pays for the data another side left in the page cache.
pub fn settle() {
    nix::unistd::sync();
}

/// What a directory tree costs on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskUse {
    /// Allocated bytes (`du`): what the disk really gives up.
    pub allocated: u64,
    /// Sum of file lengths (`du --apparent-size`).
    pub apparent: u64,
    /// Files and directories, the root included.
    pub inodes: u64,
}

/// Disk use of everything under `path` (the directory itself included). Entries that vanish while
/// it walks are skipped.
pub fn disk_use(path: &Path) -> Result<DiskUse> {
    fn walk(p: &Path, acc: &mut DiskUse) -> io::Result<()> {
        let meta = match fs::symlink_metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        acc.allocated += meta.blocks() * 512;
        acc.apparent += if meta.is_dir() { 0 } else { meta.len() };
        acc.inodes += 1;
        if meta.is_dir() {
            let entries = match fs::read_dir(p) {
                Ok(e) => e,
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            for entry in entries {
                walk(&entry?.path(), acc)?;
            }
        }
        Ok(())
    }
    let mut acc = DiskUse::default();
    walk(path, &mut acc).with_context(|| format!("measure {}", path.display()))?;
    Ok(acc)
}

/// The price of one durable small write on this disk: a new 10 KB file written and fsynced, then
/// its directory fsynced; the median of `n`. Returns (file fsync, directory fsync).
pub fn fsync_price(dir: &Path, n: usize) -> Result<(Duration, Duration)> {
    fs::create_dir_all(dir)?;
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let bytes = vec![b'x'; 10_000];
    for i in 0..n {
        let path = dir.join(format!("probe-{i}"));
        let mut f = File::create(&path)?;
        f.write_all(&bytes)?;
        let (d, _) = timed(|| Ok(f.sync_all()?))?;
        files.push(d);
        let (d, _) = timed(|| Ok(File::open(dir)?.sync_all()?))?;
        dirs.push(d);
    }
    fs::remove_dir_all(dir)?;
    Ok((median(&files), median(&dirs)))
}

/// What making `n` new small files durable costs on this disk, three ways: one fsync after the
/// other (what a store does when it syncs file by file), all fsyncs at once from several threads
/// (the block layer merges concurrent cache flushes), and one `syncfs` of the file system (which
/// also flushes everybody else's dirty data). Each is followed by one directory fsync.
#[derive(Debug, Clone, Copy)]
pub struct BatchPrice {
    /// fsync file by file.
    pub sequential: Duration,
    /// fsync from up to 16 threads at once.
    pub parallel: Duration,
    /// One `syncfs`.
    pub syncfs: Duration,
}

/// Measures [`BatchPrice`] for `n` new 10 KB files under `dir` (removed afterwards).
pub fn fsync_batch_price(dir: &Path, n: usize) -> Result<BatchPrice> {
    let bytes = vec![b'y'; 10_000];
    let make = |k: &str| -> Result<Vec<File>> {
        let d = dir.join(k);
        fs::create_dir_all(&d)?;
        File::open(&d)?.sync_all()?;
        settle();
        (0..n)
            .map(|i| {
                let mut f = File::create(d.join(format!("f{i}")))?;
                f.write_all(&bytes)?;
                Ok(f)
            })
            .collect()
    };
    let files = make("seq")?;
    let (sequential, _) = timed(|| {
        for f in &files {
            f.sync_all()?;
        }
        Ok(File::open(dir.join("seq"))?.sync_all()?)
    })?;
    let files = make("par")?;
    let threads = n.clamp(1, 16);
    let (parallel, _) = timed(|| {
        let chunk = files.len().div_ceil(threads);
        std::thread::scope(|s| -> Result<()> {
            let handles: Vec<_> = files
                .chunks(chunk.max(1))
                .map(|part| s.spawn(move || part.iter().try_for_each(File::sync_all)))
                .collect();
            for h in handles {
                h.join().map_err(|_| anyhow::anyhow!("fsync thread panicked"))??;
            }
            Ok(())
        })?;
        Ok(File::open(dir.join("par"))?.sync_all()?)
    })?;
    let files = make("syncfs")?;
    let (syncfs, _) = timed(|| {
        nix::unistd::syncfs(files.first().context("no file to sync")?)?;
        Ok(File::open(dir.join("syncfs"))?.sync_all()?)
    })?;
    fs::remove_dir_all(dir)?;
    Ok(BatchPrice {
        sequential,
        parallel,
        syncfs,
    })
}

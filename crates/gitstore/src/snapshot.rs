//! A snapshot: every file the walk keeps, named by its blob id and mode, and what could not be
//! kept (too large, unreadable, not a regular file, a symlink, a nested repository) with why.
//! Files whose stat matches the stat cache are not read again.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use retrace_fsutil::RelPath;

use crate::error::{IoContext, Result};
use crate::objects::{ObjectId, Objects};
use crate::statcache::{Stamp, StatCache};
use crate::walk::{Found, Step, Walk};

/// The largest file a snapshot keeps (a larger one is a skip, as the checkpoint store's cap), and
/// when the stat cache is trusted.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes.
    pub max_file_bytes: u64,
    /// How long after its mtime and ctime a file must have been hashed for the stat cache to
    /// trust its hash (see `statcache.rs`): [`crate::RACY_MARGIN_NS`]; tests that control their
    /// writes may lower it.
    pub racy_margin_ns: i64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file_bytes: 32 * 1024 * 1024,
            racy_margin_ns: crate::RACY_MARGIN_NS,
        }
    }
}

/// A kept file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its blob.
    pub id: ObjectId,
    /// Its permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Its size in bytes.
    pub size: u64,
}

/// Why a path is in a snapshot without its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SkipReason {
    /// Larger than [`Limits::max_file_bytes`].
    Oversized,
    /// It could not be opened or read.
    Unreadable,
    /// A FIFO, socket or device.
    Special,
    /// A symbolic link (never followed).
    Symlink,
    /// A directory holding a git repository of its own (not walked).
    NestedRepository,
}

/// A path kept without its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skip {
    /// Why.
    pub reason: SkipReason,
    /// In words ("40000000 bytes, over the 33554432 byte cap").
    pub detail: String,
    /// What `lstat` said of it, to tell whether it changed between two snapshots.
    pub stamp: Option<Stamp>,
}

impl Skip {
    /// The skip of a directory the walk names without entering it (a repository of its own, one
    /// that cannot be read); `None` for what it enters or reads.
    pub(crate) fn unwalked(found: Found) -> Option<Skip> {
        let (reason, detail) = match found {
            Found::Nested => (SkipReason::NestedRepository, "a git repository of its own"),
            Found::Unreadable => (SkipReason::Unreadable, "a directory that cannot be read"),
            Found::File | Found::Dir => return None,
        };
        Some(Skip {
            reason,
            detail: detail.into(),
            stamp: None,
        })
    }
}

/// The workspace at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// Every kept file.
    pub files: BTreeMap<RelPath, Entry>,
    /// Every path kept without its bytes.
    pub skipped: BTreeMap<RelPath, Skip>,
    /// Every directory walked (to tell which directories a command created).
    pub dirs: std::collections::BTreeSet<RelPath>,
}

/// What one snapshot cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnapshotStats {
    /// Paths the walk gave.
    pub seen: u64,
    /// Files read and hashed (their stat did not match the cache).
    pub hashed: u64,
    /// Bytes read to hash them.
    pub bytes_hashed: u64,
}

/// Takes snapshots of one workspace into one object store, through its stat cache.
#[derive(Debug)]
pub struct Snapshotter {
    pub(crate) root: PathBuf,
    pub(crate) objects: Objects,
    pub(crate) cache: StatCache,
    cache_path: PathBuf,
    limits: Limits,
    /// Change notification, when it could be started (else every refresh walks everything).
    pub(crate) watch: Option<crate::watch::Watch>,
    /// Where the watch keeps its barrier file.
    pub(crate) watch_dir: PathBuf,
    /// Why the last refresh walked everything, if it did.
    pub last_full_walk: Option<String>,
    /// Why the stat cache on disk was dropped at open, if it was.
    pub cache_dropped: Option<String>,
    /// Files hashed since the last prune.
    hashed_since_prune: u64,
    /// During a full walk: the pack its blobs go into past the first [`LOOSE_FIRST`], with the
    /// stat cache entries of those blobs, made only once the pack is named.
    packing: Option<Packing>,
}

/// A full walk writes this many new blobs as loose objects, the rest into one pack: a walk that
/// finds a few changed files writes a few files, a first walk of a large tree two.
const LOOSE_FIRST: usize = 32;

/// The pack of a full walk, and what goes into the stat cache once it is named.
#[derive(Debug)]
struct Packing {
    loose: usize,
    pack: Option<crate::pack::PackWriter>,
    cache: Vec<(Vec<u8>, Stamp, ObjectId, i64)>,
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl Snapshotter {
    /// Opens the store kept in `dir` (`dir/repo.git`, `dir/statcache`; created when absent) for
    /// the workspace at `root` (canonical).
    pub fn open(dir: &Path, root: &Path, limits: Limits) -> Result<Snapshotter> {
        fs::create_dir_all(dir).at("create", dir)?;
        let made = !Objects::exists(&dir.join("repo.git"));
        let objects = Objects::open(&dir.join("repo.git"))?;
        crate::pack::remove_leftovers(&objects.dir().join("objects/pack"));
        let cache_path = dir.join("statcache");
        let (mut cache, mut cache_dropped) = StatCache::load(&cache_path);
        if made && !cache.is_empty() {
            // its blobs went with the old repository: every file is read again
            cache = StatCache::default();
            cache_dropped = Some("names blobs of an object store that is gone".into());
        }
        let watch_dir = dir.join("watch");
        fs::create_dir_all(&watch_dir).at("create", &watch_dir)?;
        let watch = crate::watch::Watch::start(&watch_dir);
        let last_full_walk = watch
            .as_ref()
            .err()
            .map(|e| format!("no change notification: {e}"));
        Ok(Snapshotter {
            root: root.to_path_buf(),
            objects,
            cache,
            cache_path,
            limits,
            watch: watch.ok(),
            watch_dir,
            last_full_walk,
            cache_dropped,
            hashed_since_prune: 0,
            packing: None,
        })
    }

    /// The object store.
    pub fn objects(&self) -> &Objects {
        &self.objects
    }

    /// How many files the stat cache knows.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    /// The inodes of the files the stat cache knows.
    pub fn cached_inodes(&self) -> std::collections::HashSet<u64> {
        self.cache.inodes().map(|(_, ino)| ino).collect()
    }

    /// Removes the blobs `snap` (the workspace as last seen) does not name: what older snapshots
    /// alone named was copied into the checkpoint store when its change was found. The stat cache
    /// is saved first. Returns how many went.
    pub fn prune(&mut self, snap: &Snapshot) -> usize {
        // The stat cache on disk must never name a blob that goes (a kill right after the prune
        // would leave it naming missing objects): it is written first, and when it cannot be,
        // nothing goes.
        if self.save_cache().is_err() {
            return 0;
        }
        let keep: std::collections::HashSet<ObjectId> = snap
            .files
            .values()
            .map(|e| e.id)
            .chain(self.cache.ids().map(|(_, id)| id))
            .collect();
        self.hashed_since_prune = 0;
        self.objects.prune(&keep)
    }

    /// Files hashed since the last prune (an upper bound on the blobs written since).
    pub fn hashed_since_prune(&self) -> u64 {
        self.hashed_since_prune
    }

    /// Writes the stat cache when it changed.
    pub fn save_cache(&mut self) -> Result<()> {
        self.cache.save(&self.cache_path)
    }

    /// The workspace now, as `walk` sees it: every file's blob written (those whose stat matches
    /// the cache are not read), and the stat cache brought up to date (in memory; see
    /// [`Snapshotter::save_cache`]). A walk error is an error; a file that cannot be read is a skip.
    pub fn snapshot(&mut self, walk: &dyn Walk) -> Result<(Snapshot, SnapshotStats)> {
        self.packing = Some(Packing {
            loose: 0,
            pack: None,
            cache: Vec::new(),
        });
        let walked = self.walk_all(walk);
        // Named only when the walk went through: an error leaves no pack, nor cache entries
        // naming what it held.
        let packing = self.packing.take();
        let walked = walked?;
        if let Some(Packing {
            pack: Some(pack),
            cache,
            ..
        }) = packing
        {
            pack.finish()?;
            for (path, stamp, id, at) in cache {
                self.cache.insert(&path, stamp, id, at);
            }
        }
        Ok(walked)
    }

    fn walk_all(&mut self, walk: &dyn Walk) -> Result<(Snapshot, SnapshotStats)> {
        let mut snap = Snapshot::default();
        let mut stats = SnapshotStats::default();
        let mut failed: Option<crate::GitStoreError> = None;
        let root = self.root.clone();
        walk.walk_stat(&mut |step| {
            if failed.is_some() {
                return;
            }
            let (rel, found, meta) = match step {
                Step::Entering(dirs) => {
                    // watched before anything in them is read: a later change is an event
                    if let Some(w) = self.watch.as_mut() {
                        w.add_dirs(dirs.iter().map(|d| root.join(d)));
                    }
                    return;
                }
                Step::Found(rel, found, meta) => (rel, found, meta),
            };
            let Ok(path) = RelPath::normalize(&root, rel) else {
                return;
            };
            if found == Found::Dir {
                // watched before its files are read (unless the walk said so before)
                if let Some(w) = self.watch.as_mut() {
                    w.add_dirs(std::iter::once(path.under(&root)));
                }
                snap.dirs.insert(path);
                return;
            }
            stats.seen += 1;
            if let Some(skip) = Skip::unwalked(found) {
                snap.skipped.insert(path, skip);
                return;
            }
            match self.one(&path, meta, &mut stats) {
                Ok(Ok(entry)) => {
                    snap.files.insert(path, entry);
                }
                Ok(Err(Some(skip))) => {
                    snap.skipped.insert(path, skip);
                }
                Ok(Err(None)) => {} // gone since the walk listed it
                Err(e) => failed = Some(e),
            }
        })
        .at("walk", &self.root)?;
        if let Some(e) = failed {
            return Err(e);
        }
        self.cache.retain(|p| {
            RelPath::from_stored(p)
                .map(|r| snap.files.contains_key(&r))
                .unwrap_or(false)
        });
        Ok((snap, stats))
    }

    /// One path: its entry, a skip, or `Err(None)` when it is gone. `meta` is what `lstat` said
    /// of it where the walk looked already.
    #[allow(clippy::type_complexity)]
    pub(crate) fn one(
        &mut self,
        rel: &RelPath,
        meta: Option<&fs::Metadata>,
        stats: &mut SnapshotStats,
    ) -> Result<std::result::Result<Entry, Option<Skip>>> {
        let abs = rel.under(&self.root);
        let skip = |reason, detail: String, stamp| {
            Ok(Err(Some(Skip {
                reason,
                detail,
                stamp,
            })))
        };
        let looked;
        let lmeta = match meta {
            Some(m) => m,
            None => match fs::symlink_metadata(&abs) {
                Ok(m) => {
                    looked = m;
                    &looked
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Err(None)),
                Err(e) => return skip(SkipReason::Unreadable, e.to_string(), None),
            },
        };
        let stamp = Stamp::of(lmeta);
        let ft = lmeta.file_type();
        if ft.is_symlink() {
            return skip(SkipReason::Symlink, "a symbolic link".into(), Some(stamp));
        }
        if !ft.is_file() {
            return skip(SkipReason::Special, "not a regular file".into(), Some(stamp));
        }
        if stamp.size > self.limits.max_file_bytes {
            let detail = format!(
                "{} bytes, over the {} byte cap",
                stamp.size, self.limits.max_file_bytes
            );
            return skip(SkipReason::Oversized, detail, Some(stamp));
        }
        let mode = stamp.mode & 0o7777;
        if let Some(id) = self
            .cache
            .lookup(rel.as_bytes(), &stamp, self.limits.racy_margin_ns)
        {
            return Ok(Ok(Entry {
                id,
                mode,
                size: stamp.size,
            }));
        }
        let hashed_at = now_ns();
        let (file, opened) = match retrace_fsutil::open_regular_nofollow(&abs) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Err(None)),
            Err(e) => return skip(SkipReason::Unreadable, e.to_string(), Some(stamp)),
        };
        let mut bytes = Vec::with_capacity(opened.len() as usize);
        if let Err(e) = (&file)
            .take(self.limits.max_file_bytes + 1)
            .read_to_end(&mut bytes)
        {
            return skip(SkipReason::Unreadable, e.to_string(), Some(stamp));
        }
        if bytes.len() as u64 > self.limits.max_file_bytes {
            let detail = format!("over the {} byte cap", self.limits.max_file_bytes);
            return skip(SkipReason::Oversized, detail, Some(stamp));
        }
        stats.hashed += 1;
        stats.bytes_hashed += bytes.len() as u64;
        self.hashed_since_prune += 1;
        let (id, packed) = self.store_blob(&bytes)?;
        let after = file.metadata().ok().map(|m| Stamp::of(&m));
        let opened = Stamp::of(&opened);
        // Cached only when nothing moved while it was read (else the next snapshot reads it again).
        if after == Some(opened) && opened.size == bytes.len() as u64 {
            match self.packing.as_mut().filter(|_| packed) {
                Some(p) => p.cache.push((rel.as_bytes().to_vec(), opened, id, hashed_at)),
                None => self.cache.insert(rel.as_bytes(), opened, id, hashed_at),
            }
        }
        Ok(Ok(Entry {
            id,
            mode: opened.mode & 0o7777,
            size: bytes.len() as u64,
        }))
    }

    /// Writes `bytes` as a blob: loose, or into a full walk's pack once it wrote
    /// [`LOOSE_FIRST`] loose ones. Says whether it went into the pack (not there until named).
    fn store_blob(&mut self, bytes: &[u8]) -> Result<(ObjectId, bool)> {
        let Some(p) = self.packing.as_mut().filter(|p| p.loose >= LOOSE_FIRST) else {
            if let Some(p) = self.packing.as_mut() {
                p.loose += 1;
            }
            return Ok((self.objects.write_blob(bytes)?, false));
        };
        let id = Objects::blob_id(bytes)?;
        if self.objects.has(&id) {
            return Ok((id, false));
        }
        let pack = match p.pack.as_mut() {
            Some(pack) => pack,
            None => p
                .pack
                .insert(crate::pack::PackWriter::new(&self.objects.dir().join("objects"))?),
        };
        pack.add(id, bytes)?;
        Ok((id, true))
    }
}

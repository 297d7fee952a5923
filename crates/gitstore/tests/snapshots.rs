//! Snapshots of a real directory: exact blobs, a stat cache that spares unchanged files but never
//! misses a change (the racy case included), skips for what cannot be kept, and a cache that
//! survives a reopen or is dropped when damaged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use retrace_fsutil::RelPath;
use retrace_gitstore::{changes, Limits, Objects, PlainWalk, Side, SkipReason, Snapshotter};

struct Ws {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    store: std::path::PathBuf,
}

fn ws() -> Ws {
    let tmp = tempfile::tempdir().unwrap();
    fs::create_dir(tmp.path().join("ws")).unwrap();
    let root = tmp.path().join("ws").canonicalize().unwrap();
    let store = tmp.path().join("store");
    Ws {
        _tmp: tmp,
        root,
        store,
    }
}

impl Ws {
    fn write(&self, p: &str, bytes: &[u8]) {
        let abs = self.root.join(p);
        fs::create_dir_all(abs.parent().unwrap()).unwrap();
        fs::write(abs, bytes).unwrap();
    }
    fn walk(&self) -> PlainWalk {
        PlainWalk {
            root: self.root.clone(),
        }
    }
    fn open(&self, margin_ns: i64) -> Snapshotter {
        let limits = Limits {
            max_file_bytes: 1024,
            racy_margin_ns: margin_ns,
        };
        Snapshotter::open(&self.store, &self.root, limits).unwrap()
    }
}

fn rel(p: &str) -> RelPath {
    RelPath::from_stored(p.as_bytes()).unwrap()
}

#[test]
fn a_snapshot_keeps_every_file_exactly_and_the_next_reads_only_what_changed() {
    let w = ws();
    w.write("a.txt", b"one\n");
    w.write("dir/b.bin", &[0, 159, 146, 150, 255]);
    w.write("dir/deep/c.txt", b"");
    fs::set_permissions(w.root.join("a.txt"), fs::Permissions::from_mode(0o755)).unwrap();
    let mut s = w.open(0);
    let (one, stats) = s.snapshot(&w.walk()).unwrap();
    assert_eq!(stats.seen, 3);
    assert_eq!(stats.hashed, 3);
    assert_eq!(one.files.len(), 3);
    for (p, bytes) in [
        ("a.txt", &b"one\n"[..]),
        ("dir/b.bin", &[0, 159, 146, 150, 255]),
        ("dir/deep/c.txt", b""),
    ] {
        let e = one.files[&rel(p)];
        assert_eq!(s.objects().read_blob(&e.id).unwrap(), bytes, "{p}");
        assert_eq!(e.size, bytes.len() as u64);
    }
    assert_eq!(one.files[&rel("a.txt")].mode, 0o755);

    // nothing changed: nothing read
    let (same, stats) = s.snapshot(&w.walk()).unwrap();
    assert_eq!(same, one);
    assert_eq!(stats.hashed, 0);

    // a modification, a new file, a deletion, a mode change
    w.write("a.txt", b"two, longer\n");
    w.write("new.txt", b"new\n");
    fs::remove_file(w.root.join("dir/deep/c.txt")).unwrap();
    fs::set_permissions(w.root.join("dir/b.bin"), fs::Permissions::from_mode(0o600)).unwrap();
    let (two, stats) = s.snapshot(&w.walk()).unwrap();
    assert_eq!(stats.hashed, 3, "a.txt, new.txt and b.bin (its ctime moved)");
    let got: Vec<(String, bool, bool)> = changes(&one, &two)
        .iter()
        .map(|c| {
            (
                c.path.to_lossy(),
                c.before != Side::Absent,
                c.after != Side::Absent,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a.txt".into(), true, true),
            ("dir/b.bin".into(), true, true),
            ("dir/deep/c.txt".into(), true, false),
            ("new.txt".into(), false, true),
        ]
    );
    // the earlier bytes are still there to give back
    let old = one.files[&rel("a.txt")].id;
    assert_eq!(s.objects().read_blob(&old).unwrap(), b"one\n");
}

/// A file rewritten with the same size right after it was hashed, its mtime put back: read again,
/// never missed (its ctime moved; a rewrite within one timestamp tick, which leaves even the ctime,
/// cannot be forced from a test: the stat cache's unit test covers the margin that catches it).
#[test]
fn a_same_size_rewrite_right_after_a_snapshot_is_seen() {
    let w = ws();
    w.write("r.txt", b"aaaa");
    let mut s = w.open(retrace_gitstore::RACY_MARGIN_NS);
    let (one, _) = s.snapshot(&w.walk()).unwrap();
    for round in 0..20u8 {
        let bytes = [b'b' + round; 4];
        let path = w.root.join("r.txt");
        let before = fs::metadata(&path).unwrap();
        fs::write(&path, bytes).unwrap();
        // put the mtime back as it was, as a fast rewrite within one timestamp tick would leave it
        let f = fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(before.modified().unwrap()).unwrap();
        drop(f);
        let (now, _) = s.snapshot(&w.walk()).unwrap();
        let e = now.files[&rel("r.txt")];
        assert_eq!(s.objects().read_blob(&e.id).unwrap(), bytes, "round {round}");
        assert_ne!(now, one);
    }
}

#[test]
fn what_cannot_be_kept_is_a_skip_that_says_why() {
    let w = ws();
    w.write("big.bin", &[7u8; 2000]);
    w.write("ok.txt", b"ok\n");
    std::os::unix::fs::symlink("ok.txt", w.root.join("link")).unwrap();
    nix_mkfifo(&w.root.join("fifo"));
    fs::create_dir_all(w.root.join("nested/.git")).unwrap();
    w.write("nested/inner.txt", b"not walked\n");
    w.write("secret.txt", b"no\n");
    fs::set_permissions(w.root.join("secret.txt"), fs::Permissions::from_mode(0o000)).unwrap();
    let mut s = w.open(0);
    let (snap, _) = s.snapshot(&w.walk()).unwrap();
    let reason = |p: &str| snap.skipped.get(&rel(p)).map(|k| k.reason);
    assert_eq!(reason("big.bin"), Some(SkipReason::Oversized));
    assert_eq!(reason("link"), Some(SkipReason::Symlink));
    assert_eq!(reason("fifo"), Some(SkipReason::Special));
    assert_eq!(reason("nested"), Some(SkipReason::NestedRepository));
    assert!(!snap.files.contains_key(&rel("nested/inner.txt")));
    // root reads everything: only an unprivileged run sees the unreadable file
    if fs::read(w.root.join("secret.txt")).is_err() {
        assert_eq!(reason("secret.txt"), Some(SkipReason::Unreadable));
    }
    assert!(snap.files.contains_key(&rel("ok.txt")));
    // an oversized file that grows is a change (its stat moved), though its bytes are not kept
    let f = fs::File::options()
        .append(true)
        .open(w.root.join("big.bin"))
        .unwrap();
    f.set_len(3000).unwrap();
    drop(f);
    let (after, _) = s.snapshot(&w.walk()).unwrap();
    let c = changes(&snap, &after);
    assert!(c.iter().any(|c| c.path == rel("big.bin")), "{c:?}");
    fs::set_permissions(w.root.join("secret.txt"), fs::Permissions::from_mode(0o600)).unwrap();
}

fn nix_mkfifo(p: &Path) {
    let status = std::process::Command::new("mkfifo").arg(p).status().unwrap();
    assert!(status.success());
}

#[test]
fn the_stat_cache_survives_a_reopen_and_a_damaged_one_is_dropped() {
    let w = ws();
    for i in 0..20 {
        w.write(&format!("f{i}.txt"), format!("{i}\n").as_bytes());
    }
    let mut s = w.open(0);
    let (one, _) = s.snapshot(&w.walk()).unwrap();
    s.save_cache().unwrap();
    drop(s);
    let mut s = w.open(0);
    assert_eq!(s.cache_dropped, None);
    assert_eq!(s.cached(), 20);
    let (again, stats) = s.snapshot(&w.walk()).unwrap();
    assert_eq!((again == one, stats.hashed), (true, 0));
    drop(s);
    // damaged: dropped, said why, and everything read again
    let cache = w.store.join("statcache");
    let mut bytes = fs::read(&cache).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    fs::write(&cache, bytes).unwrap();
    let mut s = w.open(0);
    assert_eq!(s.cache_dropped.as_deref(), Some("is damaged"));
    let (third, stats) = s.snapshot(&w.walk()).unwrap();
    assert_eq!((third == one, stats.hashed), (true, 20));
}

#[test]
fn a_damaged_or_missing_object_is_an_error_naming_it() {
    let w = ws();
    w.write("a.txt", b"keep me\n");
    let mut s = w.open(0);
    let (snap, _) = s.snapshot(&w.walk()).unwrap();
    let id = snap.files[&rel("a.txt")].id;
    let hex = id.to_string();
    let loose = w.store.join("repo.git/objects").join(&hex[..2]).join(&hex[2..]);
    assert!(loose.is_file());
    // another valid object's bytes under this name: read, but it hashes wrong
    let other = s.objects().write_blob(b"something else\n").unwrap().to_string();
    let other_path = w
        .store
        .join("repo.git/objects")
        .join(&other[..2])
        .join(&other[2..]);
    fs::set_permissions(&loose, fs::Permissions::from_mode(0o644)).unwrap();
    fs::copy(&other_path, &loose).unwrap();
    drop(s);
    let s = w.open(0);
    let e = s.objects().read_blob(&id).unwrap_err().to_string();
    assert!(e.contains(&hex) && e.contains("damaged"), "{e}");
    fs::remove_file(&loose).unwrap();
    let s2 = Objects::open(&w.store.join("repo.git")).unwrap();
    let e = s2.read_blob(&id).unwrap_err().to_string();
    assert!(e.contains(&hex) && e.contains("missing"), "{e}");
}

/// The store is a bare repository of its own: opening it reads no git configuration, and the
/// workspace gets nothing (no `.git`, no file).
#[test]
fn the_store_touches_nothing_in_the_workspace() {
    let w = ws();
    w.write("a.txt", b"a\n");
    let mut s = w.open(0);
    s.snapshot(&w.walk()).unwrap();
    s.save_cache().unwrap();
    let names: Vec<_> = fs::read_dir(&w.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.txt"]);
    assert!(w.store.join("repo.git/HEAD").is_file());
}

#[test]
fn a_walk_that_hashes_many_files_writes_one_pack_and_every_blob_reads_back() {
    let w = ws();
    for i in 0..200 {
        w.write(
            &format!("d{}/f{i}.txt", i % 7),
            format!("file {i}\n").repeat(i % 5 + 1).as_bytes(),
        );
    }
    w.write("same1.txt", b"same\n");
    w.write("same2.txt", b"same\n");
    let mut s = w.open(0);
    let (snap, stats) = s.snapshot(&w.walk()).unwrap();
    assert_eq!(snap.files.len(), 202);
    assert_eq!(stats.hashed, 202);
    let objects = w.store.join("repo.git/objects");
    let packs: Vec<String> = fs::read_dir(objects.join("pack"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(packs.len(), 2, "one pack and its index: {packs:?}");
    let loose = fs::read_dir(&objects)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().len() == 2)
        .map(|e| fs::read_dir(e.path()).unwrap().count())
        .sum::<usize>();
    assert!(loose <= 32, "{loose} loose objects");
    for (path, entry) in &snap.files {
        let bytes = s.objects().read_blob(&entry.id).unwrap();
        assert_eq!(bytes, fs::read(path.under(&w.root)).unwrap());
    }
    // The stat cache names the packed blobs too: nothing is read again, after a reopen as well.
    s.save_cache().unwrap();
    let (_, again) = s.snapshot(&w.walk()).unwrap();
    assert_eq!(again.hashed, 0);
    drop(s);
    let mut s = w.open(0);
    let (snap2, again) = s.snapshot(&w.walk()).unwrap();
    assert_eq!(again.hashed, 0);
    assert_eq!(snap2.files, snap.files);
    assert!(retrace_gitstore::fsck(&w.store).is_empty());
}

#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The git backend's walk against the tools' walker (the `ignore` crate's, with the same rules):
//! on seeded hostile trees both keep the same paths, say the same of each, in the same order.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Found, Step, TreeWalk};
use crate::walk::walker_with;
use crate::workspace::Workspace;

/// What the walk visited, in order.
type Visits = Vec<(PathBuf, Found)>;

/// The walk as it was built on the tools' walker: the oracle.
fn oracle(ws: &Workspace, dir: &Path) -> Visits {
    fn error_path(e: &ignore::Error) -> Option<&Path> {
        match e {
            ignore::Error::WithPath { path, .. } => Some(path),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                error_path(err)
            }
            _ => None,
        }
    }
    let mut out = Vec::new();
    let nested = Arc::new(Mutex::new(Vec::<PathBuf>::new()));
    let root = ws.root().to_path_buf();
    for entry in walker_with(ws, &root.join(dir), None, Some(nested.clone())).unwrap() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let unreadable_dir = error_path(&e)
                    .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
                    .and_then(|p| p.strip_prefix(&root).ok())
                    .filter(|rel| !rel.as_os_str().is_empty());
                if let Some(rel) = unreadable_dir {
                    out.push((rel.to_path_buf(), Found::Unreadable));
                }
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(&root).unwrap().to_path_buf();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        out.push((rel, if is_dir { Found::Dir } else { Found::File }));
    }
    for p in nested.lock().unwrap().iter() {
        out.push((p.strip_prefix(&root).unwrap().to_path_buf(), Found::Nested));
    }
    out
}

/// A small seeded generator (no dependency for a test's dice).
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

const NAMES: [&str; 14] = [
    "a",
    "b.log",
    "keep.log",
    "build",
    "x",
    "top.txt",
    ".hidden",
    "d1",
    "d2",
    "z.tmp",
    "Ab",
    "a-b",
    "a.b",
    "node_modules",
];
const RULES: [&str; 10] = [
    "*.log",
    "!keep.log",
    "build/",
    "/top.txt",
    "d*",
    "**/x",
    "*.tmp",
    "!d2",
    "a/",
    "node_modules",
];

/// A seeded tree under `dir`, `depth` levels deep, with ignore files, nested repositories, a
/// `.git` file, symlinks (to a file, a directory, nowhere), a FIFO and a name that is not UTF-8.
fn tree(d: &mut Dice, dir: &Path, depth: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for _ in 0..(3 + d.below(6)) {
        let name = NAMES[d.below(NAMES.len())];
        let p = dir.join(name);
        if p.symlink_metadata().is_ok() {
            continue;
        }
        match d.below(12) {
            0..=4 => std::fs::write(&p, name).unwrap(),
            5..=7 if depth > 0 => tree(d, &p, depth - 1),
            8 => {
                let rules: Vec<&str> = (0..1 + d.below(3)).map(|_| RULES[d.below(RULES.len())]).collect();
                let file = if d.below(2) == 0 { ".gitignore" } else { ".ignore" };
                std::fs::write(dir.join(file), rules.join("\n")).unwrap();
            }
            9 => {
                std::fs::create_dir_all(p.join(".git")).unwrap();
                std::fs::write(p.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
                std::fs::write(p.join("inside"), "x").unwrap();
            }
            10 => match d.below(3) {
                0 => symlink("a", &p).unwrap(),
                1 => symlink(".", &p).unwrap(),
                _ => symlink("/nowhere", &p).unwrap(),
            },
            _ => {
                let made = std::process::Command::new("mkfifo").arg(&p).status().unwrap();
                assert!(made.success());
            }
        }
    }
    if d.below(4) == 0 {
        std::fs::write(dir.join(std::ffi::OsStr::from_bytes(b"caf\xe9")), "latin-1").unwrap();
    }
    if d.below(8) == 0 {
        std::fs::write(dir.join(".git"), "gitdir: /elsewhere\n").unwrap();
    }
}

/// Seeded hostile tree `seed` at `root` with one of the rule sets, and for odd seeds places off
/// limits (a directory or a file the tree may have, one that it has not); the dice, to go on.
fn seeded(seed: u64, root: &Path) -> (Workspace, Dice) {
    let mut d = Dice(seed);
    tree(&mut d, root, 3);
    std::fs::write(root.join(".gitignore"), RULES[d.below(RULES.len())]).unwrap();
    let mut ws = Workspace::new(root).unwrap();
    if seed % 2 == 1 {
        let pick = NAMES[d.below(NAMES.len())];
        ws = ws
            .with_off_limits(&root.join(pick), "a test's place")
            .with_off_limits(&root.join("d1").join(pick), "another")
            .with_off_limits(&root.join("nowhere"), "absent");
    }
    (ws, d)
}

#[test]
fn the_walk_keeps_what_the_tools_walker_keeps_in_its_order() {
    for seed in 0..60u64 {
        let tmp = tempfile::tempdir().unwrap();
        let (ws, _) = seeded(seed, &tmp.path().join("ws"));
        let walk = TreeWalk::new(&ws);
        let mut dirs = vec![PathBuf::new()];
        let mut got: Visits = Vec::new();
        walk.walk(Path::new(""), &mut |p, f| got.push((p.to_path_buf(), f)))
            .unwrap();
        dirs.extend(
            got.iter()
                .filter(|(_, f)| *f == Found::Dir)
                .map(|(p, _)| p.clone()),
        );
        assert_eq!(got, oracle(&ws, Path::new("")), "seed {seed}");
        for dir in dirs {
            let mut under: Visits = Vec::new();
            walk.walk(&dir, &mut |p, f| under.push((p.to_path_buf(), f)))
                .unwrap();
            assert_eq!(under, oracle(&ws, &dir), "seed {seed}, under {dir:?}");
        }
    }
}

#[test]
fn each_file_comes_with_what_lstat_says_of_it() {
    let mut d = Dice(7);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    tree(&mut d, &root, 3);
    let ws = Workspace::new(&root).unwrap();
    let mut files = 0;
    TreeWalk::new(&ws)
        .walk_stat(Path::new(""), &mut |step| {
            let Step::Found(p, f, meta) = step else {
                return;
            };
            let Some(meta) = meta else {
                assert_ne!(f, Found::File, "{p:?}");
                return;
            };
            assert_eq!(f, Found::File);
            let l = ws.root().join(p).symlink_metadata().unwrap();
            assert_eq!(
                (meta.ino(), meta.mode(), meta.len()),
                (l.ino(), l.mode(), l.len()),
                "{p:?}"
            );
            files += 1;
        })
        .unwrap();
    assert!(files > 5, "{files}");
}

#[test]
fn a_deep_tree_holds_one_directory_open_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let mut p = root.clone();
    for _ in 0..300 {
        p.push("d");
    }
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("f"), "deep").unwrap();
    let fds = || std::fs::read_dir("/proc/self/fd").unwrap().count();
    let ws = Workspace::new(&root).unwrap();
    let before = fds();
    let mut most = 0;
    let mut seen = 0;
    TreeWalk::new(&ws)
        .walk(Path::new(""), &mut |_, _| {
            most = most.max(fds());
            seen += 1;
        })
        .unwrap();
    assert_eq!(seen, 301);
    // Not one per level (300): the other tests of this process open a few of their own meanwhile.
    assert!(
        most < before + 20,
        "{most} descriptors open during the walk, {before} before"
    );
}

#[test]
fn each_directory_is_announced_before_anything_in_it_is_looked_at() {
    let mut d = Dice(11);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    tree(&mut d, &root, 3);
    let ws = Workspace::new(&root).unwrap();
    let mut announced: Vec<PathBuf> = Vec::new();
    let mut dirs = 0;
    TreeWalk::new(&ws)
        .walk_stat(Path::new(""), &mut |step| match step {
            Step::Entering(below) => announced.extend(below.iter().cloned()),
            Step::Found(p, f, _) => {
                let parent = p.parent().unwrap();
                assert!(
                    parent.as_os_str().is_empty() || announced.iter().any(|a| a == parent),
                    "{p:?} before its directory was announced"
                );
                if f == Found::Dir {
                    assert!(announced.iter().any(|a| a == p), "{p:?}");
                    dirs += 1;
                }
            }
        })
        .unwrap();
    assert_eq!(announced.len(), dirs);
}

/// Every path of a tree, symlinks not followed (relative to `root`).
fn every_path(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(root.join(rel)).unwrap() {
        let e = e.unwrap();
        let p = rel.join(e.file_name());
        out.push(p.clone());
        if e.file_type().unwrap().is_dir() {
            every_path(root, &p, out);
        }
    }
}

/// `keeps` says yes of exactly the paths the walk visits, asked in any order of one walk (which
/// remembers the directories it kept) or of a walk made for each question.
#[test]
fn keeps_says_yes_of_exactly_what_the_walk_visits_in_any_order() {
    for seed in 0..60u64 {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let (ws, mut d) = seeded(seed, &root);
        let mut visited = std::collections::HashSet::new();
        TreeWalk::new(&ws)
            .walk(Path::new(""), &mut |p, _| {
                visited.insert(p.to_path_buf());
            })
            .unwrap();
        let mut all = Vec::new();
        every_path(&root, Path::new(""), &mut all);
        // Deepest first, then shuffled: what one walk remembers must not change an answer.
        all.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        for i in (1..all.len()).rev() {
            if d.below(2) == 0 {
                let j = d.below(i + 1);
                all.swap(i, j);
            }
        }
        let one = TreeWalk::new(&ws);
        for p in &all {
            let want = visited.contains(p);
            assert_eq!(one.keeps(p), want, "seed {seed}: {p:?}");
            assert_eq!(
                TreeWalk::new(&ws).keeps(p),
                want,
                "seed {seed}, a new walk: {p:?}"
            );
        }
        assert!(one.keeps(Path::new("")));
        assert!(!one.keeps(Path::new("../ws")));
    }
}

//! Generated, seeded workspaces, the edits the scenarios make, and manifests to check rewinds.
//!
//! A tree of `n` files averages about 10 KB a file (10,000 files ≈ 100 MB): 84 % code-like text
//! (1 in 20 of them executable shell scripts), 15 % incompressible binary, 1 % empty, 20 files a
//! directory, two levels of directories. Everything derives from one seed, so a run is repeatable
//! and all sides of a comparison start from identical bytes.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use retrace_fsutil::{hash_reader, sha256_bytes};

/// xorshift64* — tiny, fast, deterministic; no `rand` needed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// A number in `lo..hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi.saturating_sub(lo))
    }
}

/// What a generated file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Code-like text (compresses about 3× with zlib, like source).
    Text,
    /// Random bytes (does not compress).
    Binary,
}

/// One file of a generated tree.
#[derive(Debug, Clone)]
pub struct FileSpec {
    /// Workspace-relative path with `/` separators.
    pub rel: String,
    /// Length in bytes.
    pub len: usize,
    /// Content kind.
    pub kind: Kind,
    /// Permission bits (0o644 or 0o755).
    pub mode: u32,
    /// Seed of the content.
    pub seed: u64,
}

impl FileSpec {
    /// The file's bytes.
    pub fn content(&self) -> Vec<u8> {
        let mut rng = Rng::new(self.seed);
        match self.kind {
            Kind::Text => text(&mut rng, self.len),
            Kind::Binary => binary(&mut rng, self.len),
        }
    }
}

/// The files of a tree of `n` files.
pub fn plan_tree(n: usize, seed: u64) -> Vec<FileSpec> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let leaf = i / 20;
            let dir = format!("t{:03}/m{:02}", leaf / 25, leaf % 25);
            let roll = rng.below(100);
            let (kind, len, ext, mode) = if roll == 0 {
                (Kind::Text, 0, "txt", 0o644)
            } else if roll <= 15 {
                (Kind::Binary, rng.range(512, 30_512), "bin", 0o644)
            } else {
                let len = if rng.below(2) == 0 {
                    rng.range(200, 14_200)
                } else {
                    rng.range(200, 22_200)
                };
                if roll.is_multiple_of(20) {
                    (Kind::Text, len, "sh", 0o755)
                } else {
                    (Kind::Text, len, ["rs", "ts", "md", "py"][roll % 4], 0o644)
                }
            };
            FileSpec {
                rel: format!("{dir}/f{i:06}.{ext}"),
                len,
                kind,
                mode,
                seed: rng.next_u64(),
            }
        })
        .collect()
}

const WORDS: [&str; 64] = [
    "fn", "let", "mut", "self", "value", "path", "result", "Ok", "Err", "match", "impl", "struct", "pub",
    "use", "return", "if", "else", "for", "in", "while", "loop", "String", "Vec", "Option", "Some", "None",
    "error", "config", "file", "turn", "store", "index", "len", "iter", "map", "collect", "into", "from",
    "clone", "new", "default", "write", "read", "open", "buffer", "offset", "count", "total", "name", "kind",
    "mode", "state", "entry", "data", "item", "node", "list", "next", "=", "(", ")", "{", "}", "&",
];

/// `len` bytes of code-like ASCII text (lines of words and numbers).
pub fn text(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 32);
    while out.len() < len {
        let indent = rng.below(4) * 4;
        out.resize(out.len() + indent, b' ');
        let words = rng.range(3, 12);
        for w in 0..words {
            if w > 0 {
                out.push(b' ');
            }
            let r = rng.next_u64();
            if r.is_multiple_of(9) {
                out.extend_from_slice((r >> 20).rem_euclid(100_000).to_string().as_bytes());
            } else {
                out.extend_from_slice(WORDS[(r >> 8) as usize % WORDS.len()].as_bytes());
            }
        }
        out.extend_from_slice(b";\n");
    }
    out.truncate(len);
    out
}

/// `len` random bytes.
pub fn binary(rng: &mut Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(len);
    out
}

/// What a manifest knows of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// SHA-256, lowercase hex.
    pub sha256: String,
    /// Permission bits.
    pub mode: u32,
}

/// Path → (SHA-256, mode) of every regular file under a root.
pub type Manifest = BTreeMap<String, Entry>;

/// Writes the tree into every root (identical bytes and modes) and returns its manifest.
pub fn write_tree(specs: &[FileSpec], roots: &[&Path]) -> Result<Manifest> {
    let mut manifest = Manifest::new();
    for spec in specs {
        let bytes = spec.content();
        for root in roots {
            write_file(&root.join(&spec.rel), &bytes, Some(spec.mode))?;
        }
        manifest.insert(
            spec.rel.clone(),
            Entry {
                sha256: sha256_bytes(&bytes),
                mode: spec.mode,
            },
        );
    }
    Ok(manifest)
}

/// Writes `bytes` at `path` (plain write, no fsync, parents created), then sets `mode` if given.
pub fn write_file(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    if let Some(parent) = path.parent() {
        if !parent.is_dir() {
            fs::create_dir_all(parent).with_context(|| format!("create {}", parent.display()))?;
        }
    }
    let mut f = File::create(path).with_context(|| format!("create {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("write {}", path.display()))?;
    if let Some(mode) = mode {
        f.set_permissions(fs::Permissions::from_mode(mode))
            .with_context(|| format!("chmod {}", path.display()))?;
    }
    Ok(())
}

/// Scans every regular file under `root`. A symlink or special file is an error: generated trees
/// have none, so one appearing means a side left something behind.
pub fn scan(root: &Path) -> Result<Manifest> {
    fn walk(root: &Path, dir: &Path, out: &mut Manifest) -> Result<()> {
        for entry in fs::read_dir(dir).with_context(|| format!("list {}", dir.display()))? {
            let entry = entry?;
            let path = entry.path();
            let meta = fs::symlink_metadata(&path)?;
            if meta.is_dir() {
                walk(root, &path, out)?;
            } else if meta.is_file() {
                let rel = path
                    .strip_prefix(root)?
                    .to_str()
                    .context("non-UTF-8 name in a generated tree")?
                    .to_string();
                let (sha256, _) = hash_reader(File::open(&path)?)?;
                out.insert(
                    rel,
                    Entry {
                        sha256,
                        mode: meta.permissions().mode() & 0o7777,
                    },
                );
            } else {
                bail!("{} is neither a file nor a directory", path.display());
            }
        }
        Ok(())
    }
    let mut out = Manifest::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

/// The differences between what was expected and what is on disk (at most `limit` described).
pub fn diff(expected: &Manifest, actual: &Manifest, limit: usize) -> Vec<String> {
    let mut out = Vec::new();
    for (path, want) in expected {
        match actual.get(path) {
            None => out.push(format!("{path}: missing")),
            Some(got) if got.sha256 != want.sha256 => out.push(format!("{path}: content differs")),
            Some(got) if got.mode != want.mode => {
                out.push(format!("{path}: mode {:o}, expected {:o}", got.mode, want.mode))
            }
            Some(_) => {}
        }
    }
    for path in actual.keys().filter(|p| !expected.contains_key(*p)) {
        out.push(format!("{path}: unexpected file"));
    }
    let n = out.len();
    out.truncate(limit);
    if n > limit {
        out.push(format!("… and {} more", n - limit));
    }
    out
}

/// What an edit does to one file.
#[derive(Debug, Clone)]
pub enum Op {
    /// Create or replace the file with these bytes (an existing file keeps its mode; a new one
    /// gets 0o644).
    Write(Vec<u8>),
    /// Delete the file.
    Delete,
}

/// One file edit, as an agent's edit tool would make it.
#[derive(Debug, Clone)]
pub struct Edit {
    /// Workspace-relative path.
    pub rel: String,
    /// What happens to it.
    pub op: Op,
}

impl Edit {
    /// Replaces (or creates) `rel` with `bytes`.
    pub fn write(rel: impl Into<String>, bytes: Vec<u8>) -> Edit {
        Edit {
            rel: rel.into(),
            op: Op::Write(bytes),
        }
    }
}

/// Applies `edit` under `root` (plain write or unlink, no fsync, as the shadow-git tools' editors
/// do) and records the result in `manifest`.
pub fn apply(root: &Path, edit: &Edit, manifest: &mut Manifest) -> Result<()> {
    let path = root.join(&edit.rel);
    match &edit.op {
        Op::Write(bytes) => {
            let existed = manifest.get(&edit.rel).map(|e| e.mode);
            let mode = existed.unwrap_or(0o644);
            write_file(&path, bytes, existed.is_none().then_some(mode))?;
            manifest.insert(
                edit.rel.clone(),
                Entry {
                    sha256: sha256_bytes(bytes),
                    mode,
                },
            );
        }
        Op::Delete => {
            fs::remove_file(&path).with_context(|| format!("delete {}", path.display()))?;
            manifest.remove(&edit.rel);
        }
    }
    Ok(())
}

/// Files of `manifest` that are text of roughly 10 KB (8–12 KB): the per-turn edit targets, so
/// that every turn's before-image and after-image are "one file of about 10 KB".
pub fn ten_kb_candidates(specs: &[FileSpec]) -> Vec<String> {
    let mut c: Vec<String> = specs
        .iter()
        .filter(|s| s.kind == Kind::Text && (8_000..=12_000).contains(&s.len))
        .map(|s| s.rel.clone())
        .collect();
    if c.is_empty() {
        c = specs.iter().map(|s| s.rel.clone()).collect();
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trees_are_repeatable_and_average_about_ten_kb() {
        let a = plan_tree(2_000, 7);
        let b = plan_tree(2_000, 7);
        assert_eq!(a.len(), 2_000);
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.rel == y.rel && x.content() == y.content()));
        let total: usize = a.iter().map(|s| s.len).sum();
        let mean = total / a.len();
        assert!((8_500..11_500).contains(&mean), "mean {mean}");
        assert!(a.iter().any(|s| s.kind == Kind::Binary));
        assert!(a.iter().any(|s| s.mode == 0o755));
        assert!(a.iter().any(|s| s.len == 0));
        assert_eq!(text(&mut Rng::new(1), 1000).len(), 1000);
    }
}

//! The bare repository: created once, opened isolated from every git configuration (the user's,
//! the system's, the environment's), written with blobs and read back checked.

use std::path::{Path, PathBuf};

use crate::error::{GitStoreError, Result};

/// A git object id (SHA-1).
pub type ObjectId = gix::ObjectId;

/// The object store of one session: a bare git repository at `dir`.
pub struct Objects {
    repo: gix::Repository,
    dir: PathBuf,
}

impl std::fmt::Debug for Objects {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Objects").field("dir", &self.dir).finish()
    }
}

fn isolated() -> gix::open::Options {
    gix::open::Options::isolated()
}

impl Objects {
    /// Opens the repository at `dir`, creating it (bare, SHA-1) when absent: made whole under
    /// another name, then renamed into place, so a process killed while making it never leaves a
    /// half-made repository at `dir` (what it leaves under the other name goes at the next make).
    pub fn open(dir: &Path) -> Result<Objects> {
        let git = |op: &'static str| {
            move |e: &dyn std::fmt::Display| GitStoreError::Git {
                op,
                path: dir.to_path_buf(),
                detail: e.to_string(),
            }
        };
        if std::fs::symlink_metadata(dir).is_err() {
            make(dir).map_err(|e| git("be created")(&e))?;
        }
        let repo = gix::open_opts(dir, isolated()).map_err(|e| git("open")(&e))?;
        Ok(Objects {
            repo,
            dir: dir.to_path_buf(),
        })
    }

    /// Whether a repository was ever made at `dir` (something is there).
    pub fn exists(dir: &Path) -> bool {
        std::fs::symlink_metadata(dir).is_ok()
    }

    /// The repository's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `bytes` as a blob (nothing when it is there already) and returns its id.
    pub fn write_blob(&self, bytes: &[u8]) -> Result<ObjectId> {
        self.repo
            .write_blob(bytes)
            .map(|id| id.detach())
            .map_err(|e| GitStoreError::Git {
                op: "write a blob",
                path: self.dir.clone(),
                detail: e.to_string(),
            })
    }

    /// The id `bytes` have as a blob, without writing them.
    pub fn blob_id(bytes: &[u8]) -> Result<ObjectId> {
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes).map_err(|e| {
            GitStoreError::Git {
                op: "hash a blob",
                path: PathBuf::new(),
                detail: e.to_string(),
            }
        })
    }

    /// Whether blob `id` is in the store.
    pub fn has(&self, id: &ObjectId) -> bool {
        self.repo.has_object(id)
    }

    /// The bytes of blob `id`, checked against its id: a missing, damaged or wrong object is an
    /// error naming it.
    pub fn read_blob(&self, id: &ObjectId) -> Result<Vec<u8>> {
        let bad = |problem: String| GitStoreError::BadObject {
            id: id.to_string(),
            path: self.dir.clone(),
            problem,
        };
        if !self.repo.has_object(id) {
            return Err(bad("missing".into()));
        }
        let object = self
            .repo
            .find_object(*id)
            .map_err(|e| bad(format!("damaged: {e}")))?;
        if object.kind != gix::objs::Kind::Blob {
            return Err(bad(format!("a {}, not a blob", object.kind)));
        }
        let data = object.detach().data;
        let got = Objects::blob_id(&data)?;
        if got != *id {
            return Err(bad(format!("damaged: its bytes hash to {got}")));
        }
        Ok(data)
    }
}

impl Objects {
    /// Removes every loose object whose id is not in `keep` (blobs no snapshot names any more:
    /// their bytes were copied into the checkpoint store when their change was found); returns
    /// how many went. What cannot be listed or removed is left.
    pub fn prune(&self, keep: &std::collections::HashSet<ObjectId>) -> usize {
        let mut gone = 0;
        let Ok(fans) = std::fs::read_dir(self.dir.join("objects")) else {
            return 0;
        };
        for fan in fans.flatten() {
            let prefix = fan.file_name().to_string_lossy().into_owned();
            if prefix.len() != 2 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
                continue;
            }
            let Ok(objects) = std::fs::read_dir(fan.path()) else {
                continue;
            };
            for o in objects.flatten() {
                let hex = format!("{prefix}{}", o.file_name().to_string_lossy());
                let Ok(id) = ObjectId::from_hex(hex.as_bytes()) else {
                    continue;
                };
                if !keep.contains(&id) && std::fs::remove_file(o.path()).is_ok() {
                    gone += 1;
                }
            }
        }
        gone + self.prune_packs(keep)
    }

    /// Removes every pack none of whose blobs `keep` names (its index first: a pack without its
    /// index is never read), and returns how many blobs went with them. A pack that still holds a
    /// blob to keep stays whole; one whose index cannot be read is left alone.
    fn prune_packs(&self, keep: &std::collections::HashSet<ObjectId>) -> usize {
        let dir = self.dir.join("objects/pack");
        let Ok(names) = std::fs::read_dir(&dir) else {
            return 0;
        };
        let mut gone = 0;
        for e in names.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(stem) = name.strip_prefix("pack-").and_then(|n| n.strip_suffix(".idx")) else {
                continue;
            };
            let Some(ids) = std::fs::read(e.path()).ok().and_then(|b| pack_index_ids(&b)) else {
                continue;
            };
            if ids.iter().any(|id| keep.contains(id)) {
                continue;
            }
            if std::fs::remove_file(e.path()).is_ok() {
                let _ = std::fs::remove_file(dir.join(format!("pack-{stem}.pack")));
                gone += ids.len();
            }
        }
        gone
    }
}

/// The object ids a pack index (version 2) lists, or `None` when it is not one.
pub(crate) fn pack_index_ids(b: &[u8]) -> Option<Vec<ObjectId>> {
    if b.get(..8)? != b"\xfftOc\0\0\0\x02" {
        return None;
    }
    let fan = 8 + 255 * 4;
    let n = u32::from_be_bytes(b.get(fan..fan + 4)?.try_into().ok()?) as usize;
    let ids = b.get(8 + 256 * 4..8 + 256 * 4 + n.checked_mul(20)?)?;
    ids.chunks_exact(20).map(|c| ObjectId::try_from(c).ok()).collect()
}

/// Makes the bare repository `dir`: under `<name>.new` first (one left by a killed process is
/// removed), then renamed to `dir`.
fn make(dir: &Path) -> std::result::Result<(), String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.with_file_name(format!("{name}.new"));
    if std::fs::symlink_metadata(&tmp).is_ok() {
        std::fs::remove_dir_all(&tmp).map_err(|e| format!("cannot remove `{}`: {e}", tmp.display()))?;
    }
    gix::ThreadSafeRepository::init_opts(
        &tmp,
        gix::create::Kind::Bare,
        gix::create::Options::default(),
        isolated(),
    )
    .map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, dir).map_err(|e| format!("cannot rename `{}`: {e}", tmp.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_half_made_repository_left_by_a_kill_is_made_again() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo.git");
        // what a process killed while making it leaves: only under the other name
        std::fs::create_dir_all(tmp.path().join("repo.git.new/objects")).unwrap();
        let o = Objects::open(&dir).unwrap();
        let id = o.write_blob(b"x").unwrap();
        assert_eq!(o.read_blob(&id).unwrap(), b"x");
        assert!(!tmp.path().join("repo.git.new").exists());
        drop(o);
        assert!(Objects::open(&dir).is_ok(), "opened again");
    }

    #[test]
    fn a_pack_goes_once_none_of_its_blobs_is_kept_and_stays_while_one_is() {
        let tmp = tempfile::tempdir().unwrap();
        let o = Objects::open(&tmp.path().join("repo.git")).unwrap();
        let objects = o.dir().join("objects");
        let write = |blobs: &[&[u8]]| {
            let mut w = crate::pack::PackWriter::new(&objects).unwrap();
            let ids: Vec<ObjectId> = blobs
                .iter()
                .map(|b| {
                    let id = Objects::blob_id(b).unwrap();
                    w.add(id, b).unwrap();
                    id
                })
                .collect();
            w.finish().unwrap();
            ids
        };
        let first = write(&[b"kept one", b"old one"]);
        let second = write(&[b"old two", b"old three"]);
        let packs = || {
            std::fs::read_dir(objects.join("pack"))
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
                .count()
        };
        assert_eq!(packs(), 2);
        let ids = pack_index_ids(
            &std::fs::read(
                std::fs::read_dir(objects.join("pack"))
                    .unwrap()
                    .flatten()
                    .find(|e| e.file_name().to_string_lossy().ends_with(".idx"))
                    .unwrap()
                    .path(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(ids.len(), 2);
        let gone = o.prune(&[first[0]].into_iter().collect());
        assert_eq!(gone, 2, "the second pack's two blobs");
        assert_eq!(packs(), 1);
        let o = Objects::open(&tmp.path().join("repo.git")).unwrap();
        assert_eq!(o.read_blob(&first[0]).unwrap(), b"kept one");
        assert!(!o.has(&second[0]));
    }

    #[test]
    fn prune_keeps_what_it_is_told_and_removes_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let o = Objects::open(&tmp.path().join("repo.git")).unwrap();
        let keep = o.write_blob(b"keep").unwrap();
        let old = o.write_blob(b"old").unwrap();
        let gone = o.prune(&[keep].into_iter().collect());
        assert_eq!(gone, 1);
        assert_eq!(o.read_blob(&keep).unwrap(), b"keep");
        assert!(!o.has(&old));
    }
}

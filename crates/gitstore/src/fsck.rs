//! Checking an object store (`retrace fsck`): the repository opens, the stat cache reads, and every
//! blob the stat cache names is there and hashes to its name. The store is a cache, so nothing in
//! it is lost data; but a damaged blob would make the before-image of the next command that
//! changes its file a gap, so it fails the check, naming the object, the file and what to do.

use std::path::Path;

use crate::objects::{ObjectId, Objects};
use crate::statcache::StatCache;

/// One finding: the file of the store concerned (relative to the store's directory), what is
/// wrong, and whether it fails the check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreProblem {
    /// `repo.git/objects/…`, `statcache`, or `repo.git`.
    pub path: String,
    /// What is wrong, in words, with what to do.
    pub problem: String,
    /// Whether it fails the check (else a warning).
    pub error: bool,
    /// The workspace file concerned, if any.
    pub file: Option<String>,
}

const FIX: &str = "delete the store's directory (it is a cache); the next shell command walks and stores the workspace again";

/// The problems of the object store in `dir` (`<sidecar>/git`); none when there is no store.
pub fn fsck(dir: &Path) -> Vec<StoreProblem> {
    let mut out = Vec::new();
    // never made (or removed): the next shell command makes it; fsck writes nothing
    if !dir.exists() || !Objects::exists(&dir.join("repo.git")) {
        return out;
    }
    let objects = match Objects::open(&dir.join("repo.git")) {
        Ok(o) => o,
        Err(e) => {
            out.push(StoreProblem {
                path: "repo.git".into(),
                problem: format!("{e}; {FIX}"),
                error: true,
                file: None,
            });
            return out;
        }
    };
    let (cache, dropped) = StatCache::load(&dir.join("statcache"));
    if let Some(why) = dropped {
        out.push(StoreProblem {
            path: "statcache".into(),
            problem: format!(
                "the stat cache {why}: it is dropped, and the next shell command reads every file again"
            ),
            error: false,
            file: None,
        });
    }
    let mut seen = std::collections::HashSet::<ObjectId>::new();
    for (path, id) in cache.ids() {
        if !seen.insert(id) {
            continue;
        }
        if let Err(e) = objects.read_blob(&id) {
            let hex = id.to_string();
            out.push(StoreProblem {
                path: format!("repo.git/objects/{}/{}", &hex[..2], &hex[2..]),
                problem: format!("{e}; {FIX}"),
                error: true,
                file: Some(String::from_utf8_lossy(path).into_owned()),
            });
        }
    }
    out
}

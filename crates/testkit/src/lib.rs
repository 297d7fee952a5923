//! Test helpers shared by Retrace's test suites: temporary workspaces and data roots, the paths of
//! the shared fixtures, and [`mock_openai`], a mock OpenAI-compatible server (real HTTP on
//! `127.0.0.1:0`) for model-client tests. Later: script-model builders.

pub mod items;
pub mod mock_openai;

use std::path::{Path, PathBuf};

/// The repository root (the workspace's `Cargo.toml` directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared directory beside the checkout (`../shared`), where the fixtures live.
pub fn shared_dir() -> PathBuf {
    repo_root().join("../shared")
}

/// A fixture under `../shared/fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    shared_dir().join("fixtures").join(rel)
}

/// A scratch workspace and a scratch sidecar directory, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    /// Holds both directories.
    pub tmp: tempfile::TempDir,
    /// The workspace root (exists).
    pub workspace: PathBuf,
    /// Where a sidecar should go (does not exist yet).
    pub sidecar: PathBuf,
}

impl Scratch {
    /// Creates the directories.
    pub fn new() -> std::io::Result<Scratch> {
        let tmp = tempfile::tempdir()?;
        let workspace = tmp.path().join("ws");
        std::fs::create_dir(&workspace)?;
        let sidecar = tmp.path().join("data").join("s.ckpt");
        Ok(Scratch {
            workspace,
            sidecar,
            tmp,
        })
    }

    /// Writes a workspace file (creating parents).
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let p = self.workspace.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, bytes)
    }

    /// Reads a workspace file.
    pub fn read(&self, rel: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.workspace.join(rel))
    }
}

/// Copies a directory tree (files and directories only).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

//! Integration tests of the tools, one binary (`tests/all`), one module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod bash;
mod edit;
mod files;
mod intent;
mod paths;
mod read;
mod stale;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use retrace_fsutil::Fs;
use retrace_tools::{BashPolicy, Preview, Registry, RunContext, ToolError, ToolOutput, Workspace};
use serde_json::Value;

/// A scratch workspace `tmp/ws` (with room for "outside" files in `tmp`) and the standard tools.
pub struct Scratch {
    pub tmp: tempfile::TempDir,
    pub ws: Workspace,
    pub reg: Registry,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

impl Scratch {
    pub fn new() -> Scratch {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir(tmp.path().join("ws")).unwrap();
        let ws = Workspace::new(tmp.path().join("ws"))
            .unwrap()
            .with_fs(Fs::without_sync());
        Scratch {
            tmp,
            ws,
            reg: Registry::standard(),
        }
    }

    /// The absolute path of a workspace file.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.ws.root().join(rel)
    }

    /// The directory holding the workspace (outside it).
    pub fn outside(&self, rel: &str) -> PathBuf {
        fs::canonicalize(self.tmp.path()).unwrap().join(rel)
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Vec<u8> {
        fs::read(self.path(rel)).unwrap()
    }

    pub fn text(&self, rel: &str) -> String {
        String::from_utf8(self.read(rel)).unwrap()
    }

    pub fn preview(&self, tool: &str, args: Value) -> Result<Preview, ToolError> {
        self.reg.get(tool).unwrap().preview(&self.ws, &args)
    }

    pub fn run(&self, tool: &str, args: Value, preview: &Preview) -> Result<ToolOutput, ToolError> {
        let allow = |_: &str| true;
        let ctx = RunContext::new(BashPolicy::Allow, &allow);
        self.reg.get(tool).unwrap().run(&self.ws, &args, preview, &ctx)
    }

    /// Preview then run, as the agent does.
    pub fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        let p = self.preview(tool, args.clone())?;
        self.run(tool, args, &p)
    }

    pub fn call_with(&self, tool: &str, args: Value, ctx: &RunContext<'_>) -> Result<ToolOutput, ToolError> {
        let t = self.reg.get(tool).unwrap();
        let p = t.preview(&self.ws, &args)?;
        t.run(&self.ws, &args, &p, ctx)
    }
}

pub fn mode_of(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

pub fn set_mode(p: &Path, mode: u32) {
    fs::set_permissions(p, fs::Permissions::from_mode(mode)).unwrap();
}

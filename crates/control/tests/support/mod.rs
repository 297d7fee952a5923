//! What the controller tests share: a temp data root and workspace, scripted turns, file trees.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use retrace_control::{Controller, ControllerOptions, DataRoot, TurnReport};
use retrace_model::{CancellationToken, ChatModel, ScriptModel};
use retrace_protocol::{Event, TranscriptEntry};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A temp dir with a data root (`home/`) and a workspace (`ws/`), plus a runtime for turns.
pub struct World {
    pub tmp: TempDir,
    pub data: DataRoot,
    /// The canonical workspace root.
    pub ws: PathBuf,
    pub rt: tokio::runtime::Runtime,
}

impl World {
    pub fn new() -> World {
        World::new_in(None)
    }

    /// A world under `dir` (e.g. a tmpfs, where fsync is cheap), else the default temp dir.
    pub fn new_in(dir: Option<&Path>) -> World {
        let tmp = match dir {
            Some(d) => tempfile::tempdir_in(d).unwrap(),
            None => tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(tmp.path().join("ws")).unwrap();
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        let data = DataRoot::at(tmp.path().join("home"));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        World { tmp, data, ws, rt }
    }

    /// A new session on the workspace, with no model yet.
    pub fn controller(&self) -> Controller {
        Controller::create(&self.data, &self.ws, None, ControllerOptions::default()).unwrap()
    }

    pub fn at(&self, rel: &str) -> PathBuf {
        self.ws.join(rel)
    }

    pub fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.at(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
    }

    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        std::fs::read(self.at(rel)).ok()
    }

    /// The workspace's regular files and their bytes.
    pub fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        walk(&self.ws, &self.ws, &mut out);
        out
    }

    /// Runs one turn whose model makes `calls` in one step, then answers "done". Returns the
    /// report and the events.
    pub fn turn(&self, ctl: &mut Controller, prompt: &str, calls: Vec<Value>) -> (TurnReport, Vec<Event>) {
        let responses = if calls.is_empty() {
            json!([{"content": "nothing to do"}])
        } else {
            json!([{"content": "working", "tool_calls": calls}, {"content": "done"}])
        };
        self.turn_with(ctl, prompt, script(responses))
    }

    /// Runs one turn with `model`.
    pub fn turn_with(
        &self,
        ctl: &mut Controller,
        prompt: &str,
        model: Box<dyn ChatModel>,
    ) -> (TurnReport, Vec<Event>) {
        ctl.set_model(model).unwrap();
        let mut events = Vec::new();
        let report = {
            let mut out = |e: Event| events.push(e);
            let approve = |_: &str| false;
            self.rt
                .block_on(ctl.send(prompt, &mut out, &approve, &CancellationToken::new()))
                .unwrap()
        };
        assert!(report.ok, "turn {prompt:?} failed: {:?}", report.error);
        (report, events)
    }
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            walk(root, &path, out);
        } else {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            out.insert(rel, std::fs::read(&path).unwrap());
        }
    }
}

/// A script model replaying `responses` (SPEC §11.2).
pub fn script(responses: Value) -> Box<dyn ChatModel> {
    let text = json!({ "responses": responses }).to_string();
    Box::new(ScriptModel::parse("test-script.json", &text).unwrap())
}

pub fn write(path: &str, content: &str) -> Value {
    json!({"name": "write_file", "arguments": {"path": path, "content": content}})
}

pub fn delete(path: &str) -> Value {
    json!({"name": "delete_file", "arguments": {"path": path}})
}

pub fn mv(from: &str, to: &str) -> Value {
    json!({"name": "move_file", "arguments": {"from": from, "to": to}})
}

/// The user messages of a transcript as (turn, content).
pub fn users(t: &[TranscriptEntry]) -> Vec<(Option<u64>, String)> {
    t.iter()
        .filter(|m| m.role == "user")
        .map(|m| (m.turn, m.content.clone()))
        .collect()
}

/// Ignores events.
pub fn quiet() -> impl FnMut(Event) {
    |_| {}
}

//! What the controller tests share: a temp data root and workspace, a service on a runtime,
//! scripted turns through a handle, file trees.
#![allow(dead_code)]

use std::cell::Cell;
use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use retrace_control::{Service, ServiceOptions, SessionHandle, Subscription};
use retrace_protocol::{
    Delivery, Event, HeadId, ModelSpec, Numbered, Role, TranscriptEntry, TurnAccepted, TurnOutcome,
};
use serde_json::{json, Value};
use tempfile::TempDir;

/// A temp dir with a data root (`home/`), a workspace (`ws/`) and scripts (`scripts/`), a runtime
/// and a service on them.
pub struct World {
    pub tmp: TempDir,
    /// The canonical workspace root.
    pub ws: PathBuf,
    pub rt: tokio::runtime::Runtime,
    pub svc: Service,
    scripts: Cell<usize>,
}

impl World {
    pub fn new() -> World {
        World::new_in(None)
    }

    /// A world under `dir` (e.g. a tmpfs, where fsync is cheap), else the default temp dir.
    pub fn new_in(dir: Option<&Path>) -> World {
        World::with(dir, |_| {})
    }

    /// A world whose service options `tune` adjusts.
    pub fn with(dir: Option<&Path>, tune: impl FnOnce(&mut ServiceOptions)) -> World {
        let tmp = match dir {
            Some(d) => tempfile::tempdir_in(d).unwrap(),
            None => tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir(tmp.path().join("ws")).unwrap();
        std::fs::create_dir(tmp.path().join("scripts")).unwrap();
        let ws = std::fs::canonicalize(tmp.path().join("ws")).unwrap();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut opts = ServiceOptions::new(tmp.path().join("home"));
        opts.env = std::sync::Arc::new(|_| None);
        tune(&mut opts);
        let svc = Service::new(opts);
        World {
            tmp,
            ws,
            rt,
            svc,
            scripts: Cell::new(0),
        }
    }

    /// The service's options, for a second service on the same data ("the next process").
    pub fn options(&self) -> ServiceOptions {
        let mut opts = ServiceOptions::new(self.tmp.path().join("home"));
        opts.env = std::sync::Arc::new(|_| None);
        opts
    }

    /// Runs a future on the world's runtime.
    pub fn run<F: Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    /// A new session on the workspace, with no model yet.
    pub fn open(&self) -> SessionHandle {
        self.run(self.svc.create(&self.ws)).unwrap()
    }

    /// The selected head.
    pub fn head(&self, h: &SessionHandle) -> HeadId {
        self.run(h.status()).unwrap().head_id
    }

    /// The transcript of `head` (or the selected one).
    pub fn transcript(&self, h: &SessionHandle, head: Option<&str>) -> Vec<TranscriptEntry> {
        self.run(h.transcript(head.map(str::to_string))).unwrap()
    }

    /// The heads.
    pub fn heads(&self, h: &SessionHandle) -> Vec<retrace_protocol::HeadEntry> {
        self.run(h.heads()).unwrap()
    }

    /// Writes a script file (SPEC §11.2) and names it as a model.
    pub fn script(&self, responses: Value) -> ModelSpec {
        let n = self.scripts.get();
        self.scripts.set(n + 1);
        let path = self.tmp.path().join(format!("scripts/{n}.json"));
        std::fs::write(&path, json!({ "responses": responses }).to_string()).unwrap();
        ModelSpec::script(path.to_string_lossy())
    }

    /// Runs one turn whose model makes `calls` in one step, then answers "done". Returns the
    /// accepted turn and its events.
    pub fn turn(&self, h: &SessionHandle, prompt: &str, calls: Vec<Value>) -> (TurnAccepted, Vec<Event>) {
        let responses = if calls.is_empty() {
            json!([{"content": "nothing to do"}])
        } else {
            json!([{"content": "working", "tool_calls": calls}, {"content": "done"}])
        };
        let (accepted, outcome, events) = self.turn_with(h, prompt, self.script(responses));
        assert!(outcome.ok, "turn {prompt:?} failed: {:?}", outcome.error);
        (accepted, events)
    }

    /// Runs one turn with `model`; returns how it ended and its events.
    pub fn turn_with(
        &self,
        h: &SessionHandle,
        prompt: &str,
        model: ModelSpec,
    ) -> (TurnAccepted, TurnOutcome, Vec<Event>) {
        self.run(async {
            h.set_model(model).await.unwrap();
            let mut sub = h.subscribe(None);
            let accepted = h.send(prompt).await.unwrap();
            let (outcome, events) = until_finished(&mut sub, accepted.turn).await;
            (accepted, outcome, events.into_iter().map(|n| n.event).collect())
        })
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
}

/// Reads `sub` until `turn_finished` of `turn` (at most 30 s); returns how it ended and every
/// event up to it. A `lagged` fails the test.
pub async fn until_finished(sub: &mut Subscription, turn: u64) -> (TurnOutcome, Vec<Numbered>) {
    let mut seen = Vec::new();
    loop {
        let d = tokio::time::timeout(Duration::from_secs(30), sub.recv())
            .await
            .expect("the turn finishes within 30 s")
            .expect("the stream stays open until the turn finished");
        match d {
            Delivery::Event(n) => {
                let done = match &n.event {
                    Event::TurnFinished {
                        turn: t,
                        ok,
                        error,
                        usage,
                    } if *t == turn => Some(TurnOutcome {
                        turn,
                        ok: *ok,
                        error: error.clone(),
                        usage: *usage,
                    }),
                    _ => None,
                };
                seen.push(n);
                if let Some(o) = done {
                    return (o, seen);
                }
            }
            Delivery::Lagged { next_seq } => panic!("unexpected lagged (next {next_seq}) after {seen:?}"),
        }
    }
}

/// Reads `sub` until an event matches `pred` (at most 30 s); returns it.
pub async fn until(sub: &mut Subscription, pred: impl Fn(&Event) -> bool) -> Numbered {
    loop {
        let d = tokio::time::timeout(Duration::from_secs(30), sub.recv())
            .await
            .expect("the event comes within 30 s")
            .expect("the stream stays open");
        if let Delivery::Event(n) = d {
            if pred(&n.event) {
                return n;
            }
        }
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
        .filter(|m| m.role == Role::User)
        .map(|m| (m.turn, m.content.clone()))
        .collect()
}

/// The events a session publishes from the moment it was made, read back after a request without
/// waiting on a clock: the session's status says how far the stream reaches.
pub struct Recorder {
    sub: Subscription,
    /// The newest event number before the recording started (or before the last read).
    from: u64,
}

impl World {
    /// Starts recording the events of `h`'s session.
    pub fn record(&self, h: &SessionHandle) -> Recorder {
        let sub = h.subscribe(None);
        let from = self.run(h.status()).unwrap().last_event_seq;
        Recorder { sub, from }
    }

    /// The events published since the recording started or was last read, in order.
    pub fn recorded(&self, h: &SessionHandle, rec: &mut Recorder) -> Vec<Event> {
        self.run(async {
            let last = h.status().await.unwrap().last_event_seq;
            let mut out = Vec::new();
            let mut at = rec.from;
            while at < last {
                let d = tokio::time::timeout(Duration::from_secs(30), rec.sub.recv())
                    .await
                    .expect("a published event arrives within 30 s")
                    .expect("the stream stays open");
                match d {
                    Delivery::Event(n) => {
                        at = n.seq;
                        if n.seq > rec.from {
                            out.push(n.event);
                        }
                    }
                    Delivery::Lagged { next_seq } => {
                        panic!("unexpected lagged (next {next_seq}) after {out:?}")
                    }
                }
            }
            rec.from = last;
            out
        })
    }
}

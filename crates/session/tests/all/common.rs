//! Deterministic options and small helpers shared by the tests.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use retrace_fsutil::Fs;
use retrace_session::{HeadId, NewMessage, Role, Session, SessionId, SessionOptions, TurnStart, TurnStarted};
use time::OffsetDateTime;
use uuid::Uuid;

/// A sessions directory and a workspace, removed on drop.
pub struct Env {
    pub tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub workspace: PathBuf,
    pub warnings: Arc<Mutex<Vec<String>>>,
    pub opts: SessionOptions,
}

impl Env {
    pub fn new() -> Env {
        Env::with_fs(Fs::without_sync())
    }

    pub fn with_fs(fs: Fs) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data").join("sessions");
        let workspace = tmp.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let warnings = Arc::new(Mutex::new(Vec::new()));
        let opts = options(fs, warnings.clone());
        Env {
            tmp,
            dir,
            workspace,
            warnings,
            opts,
        }
    }

    pub fn create(&self) -> Session {
        self.opts.create(&self.dir, &self.workspace).unwrap()
    }

    pub fn writer(&self, id: &SessionId) -> Session {
        self.opts.open_writer(&self.dir, id).unwrap()
    }

    pub fn reader(&self, id: &SessionId) -> Session {
        self.opts.open_reader(&self.dir, id).unwrap()
    }

    pub fn log(&self, id: &SessionId) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap())
    }
}

/// Options with a clock that ticks one second per reading, counter ids, and warnings collected.
pub fn options(fs: Fs, warnings: Arc<Mutex<Vec<String>>>) -> SessionOptions {
    let tick = Arc::new(AtomicU64::new(0));
    let ids = Arc::new(AtomicU64::new(1));
    SessionOptions {
        fs,
        clock: Arc::new(move || {
            let s = tick.fetch_add(1, Ordering::SeqCst) as i64;
            OffsetDateTime::from_unix_timestamp(1_767_225_600 + s).unwrap()
        }),
        ids: Arc::new(move || Uuid::from_u128(u128::from(ids.fetch_add(1, Ordering::SeqCst)))),
        on_warning: Arc::new(move |w| warnings.lock().unwrap().push(w.to_string())),
        legacy_workspace: None,
        backend: Default::default(),
    }
}

/// Starts a turn on `head` with the next number.
pub fn turn(s: &mut Session, head: &HeadId, prompt: &str) -> TurnStarted {
    let turn = s.next_turn();
    s.start_turn(TurnStart {
        turn,
        head: head.clone(),
        message_id: None,
        content: prompt.to_string(),
    })
    .unwrap()
}

/// A turn with one assistant answer, ended.
pub fn exchange(s: &mut Session, head: &HeadId, prompt: &str, answer: &str) -> TurnStarted {
    let t = turn(s, head, prompt);
    say(s, head, answer);
    s.end_turn().unwrap();
    t
}

/// Appends an assistant message.
pub fn say(s: &mut Session, head: &HeadId, text: &str) {
    s.append(head, NewMessage::new(Role::Assistant, text)).unwrap();
}

/// The contents of a head's projection.
pub fn contents(s: &Session, head: &HeadId) -> Vec<String> {
    s.project(head)
        .unwrap()
        .into_iter()
        .map(|m| m.content.clone())
        .collect()
}

/// The lines of a file.
pub fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

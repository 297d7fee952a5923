#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Model-based property test of the checkpoint store (TESTING.md layer 2).
//!
//! Random sequences of agent edits (create / modify, delete, move, chmod, a tool that touches two
//! paths at once), shell commands (a coverage gap, sometimes with an untracked side effect on disk),
//! new turns, store reopens, edits the user makes outside Retrace (write, delete, chmod: no seam
//! call), code restores to any turn handed out so far (with `refuse`, `skip` or `overwrite`),
//! single-file reverts and undo run against a real store on a scratch workspace and against a small
//! in-memory model. Every agent edit goes through the seam exactly as the agent drives it:
//! `capture_before` of the preview's changes, then the edit on disk, then `capture_after` of the
//! previewed paths. A restore, revert or undo first ends the open turn (the controller refuses a
//! rewind while a turn runs).
//!
//! The model keeps the timeline of SPEC §5.2 as a list of images in the order Retrace's writes
//! happened: each turn's start (an index into that list), the first-touch before-image of every
//! path the turn captured, and the forward images of every committed restore, revert and undo (what
//! the files were just before it). Beside it: the workspace, the last image Retrace wrote per path
//! (the ownership proof: the after-image of the newest capture, or what a later transaction wrote),
//! the transactions and the one undo would take back. From these it predicts every plan exactly —
//! restore set, order, targets, per-file action, conflict reason and digests, gaps, coverage,
//! confirmation — and every commit and undo: refused or not, what is written and deleted, the
//! transaction, whether undo is available.
//!
//! After every step the store must agree with it: the workspace byte for byte (modes included), the
//! listing, every before-image (read through the verified reader), the after-images on the entries
//! and in `state.json` (in write order), turn numbering, the undo target and the transactions'
//! states, fsck, and no `.retrace-` file left in the workspace nor a temp file in the sidecar.
//!
//! Contents include binary with NULs, empty, CRLF, invalid UTF-8 and a file larger than the copy
//! chunk; names include two non-UTF-8 ones that look the same once made lossy, a nested one, and
//! each name is spelled three ways (`x`, `./x`, `<root>/x`), which must all be the same path.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use retrace_checkpoint::model::Image;
use retrace_checkpoint::tx::TxState;
use retrace_checkpoint::{
    BeforeImage, BeginTurn, Change, CheckpointError, CheckpointStore, CommitOptions, RestorePlan,
    StoreOptions,
};
use retrace_fsutil::{sha256_bytes, Fs, RelPath};
use retrace_protocol::{
    ChangeKind, CodeOutcome, CodePlan, Conflict, ConflictReason, Coverage, FileAction, Gap, GapReason,
    OnConflict, PlanGap, Severity,
};
use retrace_testkit::Scratch;
use time::OffsetDateTime;

/// Workspace names the ops pick from: plain, text, two non-UTF-8 ones with the same lossy form
/// (`caf\u{fffd}.bin`), nested.
const NAMES: [&[u8]; 5] = [b"a", b"b.txt", b"caf\xe9.bin", b"d/x.txt", b"caf\xff.bin"];

/// Modes a chmod picks from (all writable by the owner, no setuid: the kernel would clear it on write).
const MODES: [u32; 5] = [0o600, 0o640, 0o644, 0o700, 0o755];

/// Mode a newly created file gets (set explicitly so the umask does not matter).
const NEW_FILE_MODE: u32 = 0o644;

/// Shell command lines of bash gaps.
const COMMANDS: [&str; 3] = ["make", "rm -rf build && cargo build", "echo 'x' > a"];

fn content(i: usize) -> Vec<u8> {
    match i {
        0 => b"\0bin\0\xff\x00\x01\x02\0".to_vec(),
        1 => Vec::new(),
        2 => b"first line\r\nsecond line\r\n".to_vec(),
        3 => b"caf\xe9 \xff\xfe \xc3\x28 not utf-8".to_vec(),
        4 => b"hello world\n".to_vec(),
        // Larger than the 64 KiB copy chunk, so the streaming copy loops.
        _ => (0..70_000u32).map(|i| (i % 251) as u8).collect(),
    }
}
const CONTENTS: usize = 6;

/// How a tool spells a path.
#[derive(Debug, Clone, Copy)]
enum Spelling {
    Plain,
    DotSlash,
    Absolute,
}

/// A path as a tool names it: which name, how spelled.
#[derive(Debug, Clone, Copy)]
struct Name {
    index: usize,
    spelling: Spelling,
}

#[derive(Debug, Clone)]
enum Op {
    /// `write_file`: create or replace a file's content.
    Write { name: Name, content: usize },
    /// One tool call that changes two paths (perhaps the same file spelled twice).
    WriteTwo { a: Name, b: Name, content: usize },
    /// `delete_file` (a no-op when the file does not exist: the preview would refuse).
    Delete { name: Name },
    /// `move_file` (a no-op when the source does not exist or is the destination).
    Move { from: Name, to: Name },
    /// A mode change through an edit tool.
    Chmod { name: Name, mode: usize },
    /// A new user message: a new turn (`log_jump` makes the session log know a larger number).
    NewTurn { log_jump: Option<u64> },
    /// The process restarts: drop the store and open it again.
    Reopen,
    /// A shell command: a coverage gap, optionally with an untracked write on disk.
    Bash {
        command: usize,
        side_effect: Option<(usize, usize)>,
    },
    /// The user writes a file outside Retrace (creating it with mode 0644 when absent).
    ExternalEdit { name: usize, content: usize },
    /// The user deletes a file outside Retrace, and its directory when that is (left) empty
    /// (`rm -r d`), so a restore must create the directory again.
    ExternalDelete { name: usize },
    /// The user changes a file's mode outside Retrace (a no-op when absent).
    ExternalChmod { name: usize, mode: usize },
    /// A code restore to one of the turns handed out so far (`turn` modulo their number; a no-op
    /// before the first turn).
    Restore { turn: usize, on_conflict: OnConflict },
    /// A single-file revert (SPEC §5.6).
    Revert { name: Name, on_conflict: OnConflict },
    /// Undo of the undo target, or an attempt that must be refused when there is none.
    Undo,
}

fn name_strategy() -> impl Strategy<Value = Name> {
    (
        0..NAMES.len(),
        prop_oneof![
            Just(Spelling::Plain),
            Just(Spelling::DotSlash),
            Just(Spelling::Absolute)
        ],
    )
        .prop_map(|(index, spelling)| Name { index, spelling })
}

fn on_conflict_strategy() -> impl Strategy<Value = OnConflict> {
    prop_oneof![
        Just(OnConflict::Refuse),
        Just(OnConflict::Skip),
        Just(OnConflict::Overwrite)
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (name_strategy(), 0..CONTENTS).prop_map(|(name, content)| Op::Write { name, content }),
        1 => (name_strategy(), name_strategy(), 0..CONTENTS)
            .prop_map(|(a, b, content)| Op::WriteTwo { a, b, content }),
        2 => name_strategy().prop_map(|name| Op::Delete { name }),
        1 => (name_strategy(), name_strategy()).prop_map(|(from, to)| Op::Move { from, to }),
        1 => (name_strategy(), 0..MODES.len()).prop_map(|(name, mode)| Op::Chmod { name, mode }),
        3 => proptest::option::weighted(0.2, 1..4u64).prop_map(|log_jump| Op::NewTurn { log_jump }),
        1 => Just(Op::Reopen),
        1 => (0..COMMANDS.len(), proptest::option::of((0..NAMES.len(), 0..CONTENTS)))
            .prop_map(|(command, side_effect)| Op::Bash { command, side_effect }),
        3 => (0..NAMES.len(), 0..CONTENTS).prop_map(|(name, content)| Op::ExternalEdit { name, content }),
        2 => (0..NAMES.len()).prop_map(|name| Op::ExternalDelete { name }),
        2 => (0..NAMES.len(), 0..MODES.len()).prop_map(|(name, mode)| Op::ExternalChmod { name, mode }),
        5 => (0..32usize, on_conflict_strategy())
            .prop_map(|(turn, on_conflict)| Op::Restore { turn, on_conflict }),
        1 => (name_strategy(), on_conflict_strategy())
            .prop_map(|(name, on_conflict)| Op::Revert { name, on_conflict }),
        4 => Just(Op::Undo),
    ]
}

/// A file as the model knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileState {
    bytes: Vec<u8>,
    mode: u32,
}

fn image_of_state(s: Option<&FileState>) -> Image {
    match s {
        None => Image {
            existed: false,
            sha256: None,
            mode: None,
        },
        Some(s) => Image {
            existed: true,
            sha256: Some(sha256_bytes(&s.bytes)),
            mode: Some(s.mode),
        },
    }
}

fn lossy(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

/// One turn as the model knows it.
#[derive(Debug, Clone)]
struct ModelTurn {
    number: u64,
    /// Where the turn starts on the timeline (an index into `Model::timeline`).
    start: usize,
    /// First-touch order: path, state at first touch, the last after-image written in this turn.
    files: Vec<(Vec<u8>, Option<FileState>, Option<Image>)>,
    gaps: Vec<Gap>,
}

/// One file a transaction wrote.
#[derive(Debug, Clone)]
struct ModelTarget {
    path: Vec<u8>,
    /// What the file was just before (what undo puts back).
    forward: Option<FileState>,
    /// What the transaction wrote.
    restore: Option<FileState>,
}

/// One committed transaction (restore, revert or undo).
#[derive(Debug, Clone)]
struct ModelTx {
    id: String,
    targets: Vec<ModelTarget>,
    undone: bool,
}

/// The whole model.
#[derive(Debug, Default)]
struct Model {
    /// The workspace: relative path bytes → state.
    disk: BTreeMap<Vec<u8>, FileState>,
    turns: Vec<ModelTurn>,
    /// Index in `turns` of the open turn.
    current: Option<usize>,
    /// Last image Retrace wrote per path (the ownership proof), and the order of that write (one
    /// transaction's writes share one).
    owned: BTreeMap<Vec<u8>, (Image, u64)>,
    writes: u64,
    /// Every turn number handed out.
    issued: Vec<u64>,
    /// The largest turn number the (simulated) session log knows.
    log_max: Option<u64>,
    /// SPEC §5.2's line of time: every image, in the order Retrace's writes happened (first-touch
    /// before-images of captures, forward images of committed transactions).
    timeline: Vec<(Vec<u8>, Option<FileState>)>,
    /// Committed transactions, oldest first.
    txs: Vec<ModelTx>,
    /// Index in `txs` of the one undo would take back.
    undo_target: Option<usize>,
}

/// What the model predicts for one file of a plan.
#[derive(Debug, Clone)]
struct Expect {
    path: Vec<u8>,
    target: Option<FileState>,
    action: FileAction,
    conflict: Option<Conflict>,
}

impl Model {
    /// The restore set of everything on the timeline from `from` on: each path's earliest image, in
    /// the order of those images.
    fn restore_set(&self, from: usize) -> Vec<(Vec<u8>, Option<FileState>)> {
        let mut out: Vec<(Vec<u8>, Option<FileState>)> = Vec::new();
        for (path, state) in &self.timeline[from..] {
            if !out.iter().any(|(p, _)| p == path) {
                out.push((path.clone(), state.clone()));
            }
        }
        out
    }

    /// SPEC §5.2's per-file check, in order (no unsafe path and no missing payload can arise here).
    fn predict(&self, path: &[u8], target: Option<&FileState>) -> Expect {
        let current = self.disk.get(path);
        let (t_img, c_img) = (image_of_state(target), image_of_state(current));
        let mut e = Expect {
            path: path.to_vec(),
            target: target.cloned(),
            action: FileAction::Skip,
            conflict: None,
        };
        if t_img == c_img {
            e.action = FileAction::Unchanged;
            return e;
        }
        let proof = self.owned.get(path).map(|(img, _)| img);
        let reason = match proof {
            None => Some(ConflictReason::Unverified),
            Some(p) => match (p.existed, current) {
                (false, Some(_)) => Some(ConflictReason::DeletedAndRecreated),
                (true, None) => Some(ConflictReason::ExternalChange),
                (false, None) => None,
                (true, Some(_)) if p.mode != c_img.mode => Some(ConflictReason::ModeChange),
                (true, Some(_)) if p.sha256 != c_img.sha256 => Some(ConflictReason::ManualEdit),
                (true, Some(_)) => None,
            },
        };
        match reason {
            Some(reason) => {
                e.conflict = Some(Conflict {
                    path: lossy(path),
                    reason,
                    checkpoint_sha256: t_img.sha256,
                    last_owned_sha256: proof.and_then(|p| p.sha256.clone()),
                    current_sha256: c_img.sha256,
                    checkpoint_mode: t_img.mode,
                    current_mode: c_img.mode,
                });
            }
            None => {
                e.action = if target.is_some() {
                    FileAction::Write
                } else {
                    FileAction::Delete
                };
            }
        }
        e
    }

    /// The gaps, coverage and confirmation of a plan spanning `turns`.
    fn plan_header(turns: &[&ModelTurn]) -> (Vec<PlanGap>, Coverage, bool) {
        let gaps: Vec<PlanGap> = turns
            .iter()
            .flat_map(|t| {
                t.gaps.iter().map(|g| PlanGap {
                    turn: t.number,
                    reason: g.reason.clone(),
                    tool: g.tool.clone(),
                    path: g.path.clone(),
                    detail: g.detail.clone(),
                })
            })
            .collect();
        let coverage = if !gaps.is_empty() {
            Coverage::Partial
        } else if turns.iter().any(|t| !t.files.is_empty()) {
            Coverage::Complete
        } else {
            Coverage::None
        };
        let confirm = !gaps.is_empty();
        (gaps, coverage, confirm)
    }
}

struct Harness {
    scratch: Scratch,
    root: PathBuf,
    opts: StoreOptions,
    store: Option<CheckpointStore>,
    model: Model,
    last_seq: u64,
}

fn fixed_clock() -> retrace_checkpoint::Clock {
    Arc::new(|| OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(1_767_607_200))
}

impl Harness {
    fn new() -> Harness {
        let scratch = Scratch::new().unwrap();
        let root = fs::canonicalize(&scratch.workspace).unwrap();
        let opts = StoreOptions {
            session_id: Some("prop-session".into()),
            fs: Fs::without_sync(),
            clock: fixed_clock(),
            ..StoreOptions::default()
        };
        let store = CheckpointStore::open(&scratch.sidecar, &scratch.workspace, opts.clone()).unwrap();
        Harness {
            scratch,
            root,
            opts,
            store: Some(store),
            model: Model::default(),
            last_seq: 0,
        }
    }

    fn store(&mut self) -> &mut CheckpointStore {
        self.store.as_mut().unwrap()
    }

    /// The path as the tool passes it to the seam.
    fn spelled(&self, n: Name) -> PathBuf {
        let rel = Path::new(OsStr::from_bytes(NAMES[n.index]));
        match n.spelling {
            Spelling::Plain => rel.to_path_buf(),
            Spelling::DotSlash => Path::new(".").join(rel),
            Spelling::Absolute => self.root.join(rel),
        }
    }

    fn abs(&self, key: &[u8]) -> PathBuf {
        self.root.join(OsStr::from_bytes(key))
    }

    fn begin_turn(&mut self, log_jump: Option<u64>) {
        let before_next = self.store().next_turn();
        let log_max_turn = log_jump.map(|j| before_next + j);
        let prompt = format!("prompt {}", self.model.turns.len());
        let msg_index = 2 * self.model.turns.len() as u64;
        let n = self
            .store()
            .begin_turn(BeginTurn {
                prompt,
                msg_index,
                head: Some("main".into()),
                message_id: None,
                log_max_turn,
            })
            .unwrap();
        if let Some(m) = log_max_turn {
            self.model.log_max = Some(self.model.log_max.map_or(m, |x| x.max(m)));
        }
        // 1 + the largest number known anywhere (records, and the log when it says more).
        let expected = self
            .model
            .issued
            .iter()
            .copied()
            .chain(log_max_turn)
            .max()
            .map_or(0, |m| m + 1);
        assert_eq!(n, expected, "turn number");
        assert!(self.model.issued.iter().all(|&i| i < n), "turn numbers only grow");
        self.model.issued.push(n);
        self.model.turns.push(ModelTurn {
            number: n,
            start: self.model.timeline.len(),
            files: Vec::new(),
            gaps: Vec::new(),
        });
        self.model.current = Some(self.model.turns.len() - 1);
        // A new turn moves the mutation sequence on: the last restore can no longer be undone.
        self.model.undo_target = None;
    }

    fn ensure_turn(&mut self) {
        if self.model.current.is_none() {
            self.begin_turn(None);
        }
    }

    /// Drives one tool call through the seam: capture, edit, after-images.
    fn tool(&mut self, tool: &str, changes: Vec<(Name, ChangeKind)>, edit: impl FnOnce(&mut Harness)) {
        self.ensure_turn();
        let seam: Vec<Change> = changes
            .iter()
            .map(|(n, k)| Change::new(self.spelled(*n), *k))
            .collect();
        let report = self.store().capture_before(&seam, Some(tool)).unwrap();
        let cur = self.model.current.unwrap();
        let mut captured = Vec::new();
        for (n, _) in &changes {
            let key = NAMES[n.index].to_vec();
            let turn = &mut self.model.turns[cur];
            if !turn.files.iter().any(|(p, _, _)| *p == key) {
                let before = self.model.disk.get(&key).cloned();
                turn.files.push((key.clone(), before.clone(), None));
                self.model.timeline.push((key.clone(), before));
                captured.push(key);
            }
        }
        let got: Vec<Vec<u8>> = report.captured.iter().map(|p| p.as_bytes().to_vec()).collect();
        assert_eq!(got, captured, "paths captured (first touch wins)");
        assert!(report.gaps.is_empty(), "no gap expected: {:?}", report.gaps);

        edit(self);

        let paths: Vec<PathBuf> = changes.iter().map(|(n, _)| self.spelled(*n)).collect();
        self.store().capture_after(&paths).unwrap();
        for (n, _) in &changes {
            let key = NAMES[n.index].to_vec();
            let image = image_of_state(self.model.disk.get(&key));
            self.model.writes += 1;
            self.model
                .owned
                .insert(key.clone(), (image.clone(), self.model.writes));
            let turn = &mut self.model.turns[cur];
            if let Some(entry) = turn.files.iter_mut().find(|(p, _, _)| *p == key) {
                entry.2 = Some(image);
            }
        }
        self.model.undo_target = None;
    }

    fn kind_of(&self, key: &[u8]) -> ChangeKind {
        if self.model.disk.contains_key(key) {
            ChangeKind::Modify
        } else {
            ChangeKind::Create
        }
    }

    /// Writes a file on disk and in the model (as an edit tool, a shell or the user would).
    fn write_file(&mut self, key: &[u8], bytes: Vec<u8>) {
        let abs = self.abs(key);
        match self.model.disk.get_mut(key) {
            Some(state) => {
                fs::write(&abs, &bytes).unwrap();
                state.bytes = bytes;
            }
            None => {
                fs::create_dir_all(abs.parent().unwrap()).unwrap();
                fs::write(&abs, &bytes).unwrap();
                fs::set_permissions(&abs, fs::Permissions::from_mode(NEW_FILE_MODE)).unwrap();
                self.model.disk.insert(
                    key.to_vec(),
                    FileState {
                        bytes,
                        mode: NEW_FILE_MODE,
                    },
                );
            }
        }
    }

    /// A restore, revert or undo is a rewind: the controller refuses it while a turn runs.
    fn end_turn(&mut self) {
        self.store().end_turn();
        self.model.current = None;
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Write { name, content: c } => {
                let key = NAMES[name.index];
                let kind = self.kind_of(key);
                self.tool("write_file", vec![(name, kind)], |h| {
                    h.write_file(key, content(c))
                });
            }
            Op::WriteTwo { a, b, content: c } => {
                let (ka, kb) = (NAMES[a.index], NAMES[b.index]);
                let changes = vec![(a, self.kind_of(ka)), (b, self.kind_of(kb))];
                self.tool("multi_write", changes, |h| {
                    h.write_file(ka, content(c));
                    h.write_file(kb, content(c));
                });
            }
            Op::Delete { name } => {
                let key = NAMES[name.index];
                if !self.model.disk.contains_key(key) {
                    return;
                }
                self.tool("delete_file", vec![(name, ChangeKind::Delete)], |h| {
                    fs::remove_file(h.abs(key)).unwrap();
                    h.model.disk.remove(key);
                });
            }
            Op::Move { from, to } => {
                let (kf, kt) = (NAMES[from.index], NAMES[to.index]);
                if kf == kt || !self.model.disk.contains_key(kf) {
                    return;
                }
                let changes = vec![(from, ChangeKind::Delete), (to, self.kind_of(kt))];
                self.tool("move_file", changes, |h| {
                    let target = h.abs(kt);
                    fs::create_dir_all(target.parent().unwrap()).unwrap();
                    fs::rename(h.abs(kf), &target).unwrap();
                    let state = h.model.disk.remove(kf).unwrap();
                    h.model.disk.insert(kt.to_vec(), state);
                });
            }
            Op::Chmod { name, mode } => {
                let key = NAMES[name.index];
                if !self.model.disk.contains_key(key) {
                    return;
                }
                let mode = MODES[mode];
                self.tool("chmod", vec![(name, ChangeKind::Modify)], |h| {
                    fs::set_permissions(h.abs(key), fs::Permissions::from_mode(mode)).unwrap();
                    h.model.disk.get_mut(key).unwrap().mode = mode;
                });
            }
            Op::NewTurn { log_jump } => {
                self.store().end_turn();
                self.begin_turn(log_jump);
            }
            Op::Reopen => {
                drop(self.store.take());
                let store =
                    CheckpointStore::open(&self.scratch.sidecar, &self.scratch.workspace, self.opts.clone())
                        .unwrap();
                assert_eq!(store.current_turn(), None);
                self.store = Some(store);
                self.model.current = None;
            }
            Op::Bash { command, side_effect } => {
                self.ensure_turn();
                let gap = Gap {
                    reason: GapReason::BashSideEffect,
                    tool: Some("bash".into()),
                    path: None,
                    detail: Some(COMMANDS[command].into()),
                };
                self.store().record_gap(gap.clone()).unwrap();
                let turn = &mut self.model.turns[self.model.current.unwrap()];
                // One shell gap per turn; its detail lists each command once, in order.
                match turn.gaps.iter_mut().find(|g| g.reason == gap.reason) {
                    None => turn.gaps.push(gap),
                    Some(g) => {
                        let d = g.detail.get_or_insert_with(String::new);
                        let new = COMMANDS[command];
                        if !d.split('\n').any(|l| l == new) {
                            d.push('\n');
                            d.push_str(new);
                        }
                    }
                }
                if let Some((name, c)) = side_effect {
                    // Untracked: no capture, no after-image.
                    self.write_file(NAMES[name], content(c));
                }
            }
            Op::ExternalEdit { name, content: c } => self.write_file(NAMES[name], content(c)),
            Op::ExternalDelete { name } => {
                let key = NAMES[name];
                let abs = self.abs(key);
                if self.model.disk.remove(key).is_some() {
                    fs::remove_file(&abs).unwrap();
                }
                let parent = abs.parent().unwrap();
                if parent != self.root && fs::read_dir(parent).is_ok_and(|mut d| d.next().is_none()) {
                    fs::remove_dir(parent).unwrap();
                }
            }
            Op::ExternalChmod { name, mode } => {
                let key = NAMES[name];
                let abs = self.abs(key);
                if let Some(state) = self.model.disk.get_mut(key) {
                    state.mode = MODES[mode];
                    fs::set_permissions(abs, fs::Permissions::from_mode(MODES[mode])).unwrap();
                }
            }
            Op::Restore { turn, on_conflict } => {
                if self.model.turns.is_empty() {
                    return;
                }
                self.end_turn();
                let idx = turn % self.model.turns.len();
                self.restore(idx, on_conflict);
            }
            Op::Revert { name, on_conflict } => {
                self.end_turn();
                self.revert(name, on_conflict);
            }
            Op::Undo => {
                self.end_turn();
                self.undo();
            }
        }
    }

    /// The predicted plan of a restore to `model.turns[idx]`, and the turns it spans.
    fn expect_restore(&self, idx: usize) -> (Vec<Expect>, Vec<&ModelTurn>) {
        let m = &self.model;
        let files = m
            .restore_set(m.turns[idx].start)
            .iter()
            .map(|(p, t)| m.predict(p, t.as_ref()))
            .collect();
        (files, m.turns[idx..].iter().collect())
    }

    /// Checks a plan against the model's prediction.
    fn check_plan(ctx: &str, plan: &CodePlan, turn: u64, files: &[Expect], spanned: &[&ModelTurn]) {
        assert_eq!(plan.turn, turn, "{ctx}: plan turn");
        let got: Vec<(String, FileAction, Option<ConflictReason>)> = plan
            .files
            .iter()
            .map(|f| (f.path.clone(), f.action, f.conflict.as_ref().map(|c| c.reason)))
            .collect();
        let want: Vec<(String, FileAction, Option<ConflictReason>)> = files
            .iter()
            .map(|e| (lossy(&e.path), e.action, e.conflict.as_ref().map(|c| c.reason)))
            .collect();
        assert_eq!(got, want, "{ctx}: plan files (path, action, conflict)");
        for (f, e) in plan.files.iter().zip(files) {
            assert_eq!(f.conflict, e.conflict, "{ctx}: conflict of `{}`", f.path);
            let size = (e.action == FileAction::Write)
                .then(|| e.target.as_ref().map(|t| t.bytes.len() as u64))
                .flatten();
            assert_eq!(f.size, size, "{ctx}: size of `{}`", f.path);
        }
        let conflicts: Vec<Conflict> = files.iter().filter_map(|e| e.conflict.clone()).collect();
        assert_eq!(plan.conflicts, conflicts, "{ctx}: plan conflicts");
        let (gaps, coverage, confirm) = Model::plan_header(spanned);
        assert_eq!(plan.gaps, gaps, "{ctx}: plan gaps");
        assert_eq!(plan.coverage, coverage, "{ctx}: plan coverage");
        assert_eq!(
            plan.requires_confirmation, confirm,
            "{ctx}: requires_confirmation"
        );
    }

    fn restore(&mut self, idx: usize, on_conflict: OnConflict) {
        let number = self.model.turns[idx].number;
        let ctx = format!("restore to turn {number} ({on_conflict:?})");
        let plan = self.store().plan_restore(number).unwrap();
        let (files, spanned) = self.expect_restore(idx);
        Self::check_plan(&ctx, &plan.plan, number, &files, &spanned);
        self.commit(&ctx, &plan, files, on_conflict);
    }

    fn revert(&mut self, name: Name, on_conflict: OnConflict) {
        let key = NAMES[name.index];
        let ctx = format!("revert of `{}` ({on_conflict:?})", lossy(key));
        let path = self.spelled(name);
        let got = self.store().plan_file_revert(&path);
        // The state before the session first touched the path: its first turn's before-image.
        let m = &self.model;
        let Some(first) = m
            .turns
            .iter()
            .position(|t| t.files.iter().any(|(p, _, _)| p == key))
        else {
            assert!(
                matches!(got, Err(CheckpointError::UnknownFile { .. })),
                "{ctx}: never captured, yet {got:?}"
            );
            return;
        };
        let plan = got.unwrap();
        let target = m.turns[first]
            .files
            .iter()
            .find(|(p, _, _)| p == key)
            .and_then(|(_, s, _)| s.clone());
        let files = vec![m.predict(key, target.as_ref())];
        let relevant: Vec<&ModelTurn> = m.turns[first..]
            .iter()
            .filter(|t| t.files.iter().any(|(p, _, _)| p == key))
            .collect();
        Self::check_plan(&ctx, &plan.plan, m.turns[first].number, &files, &relevant);
        self.commit(&ctx, &plan, files, on_conflict);
    }

    /// Commits `plan` (confirmed) and checks the outcome against the model, which it then updates.
    fn commit(&mut self, ctx: &str, plan: &RestorePlan, files: Vec<Expect>, on_conflict: OnConflict) {
        let conflicts: Vec<Conflict> = files.iter().filter_map(|e| e.conflict.clone()).collect();
        let got = self.store().commit(
            plan,
            CommitOptions {
                confirm: true,
                on_conflict,
            },
        );
        if on_conflict == OnConflict::Refuse && !conflicts.is_empty() {
            match got {
                Err(CheckpointError::Refused { conflicts: c }) => {
                    assert_eq!(c, conflicts, "{ctx}: refused with these conflicts")
                }
                other => panic!("{ctx}: expected Refused, got {other:?}"),
            }
            return;
        }
        let out = got.unwrap_or_else(|e| panic!("{ctx}: commit failed: {e}"));
        let writes: Vec<&Expect> = files
            .iter()
            .filter(|e| match &e.conflict {
                None => matches!(e.action, FileAction::Write | FileAction::Delete),
                Some(_) => on_conflict == OnConflict::Overwrite,
            })
            .collect();
        assert_eq!(out.conflicts, conflicts, "{ctx}: outcome conflicts");
        if writes.is_empty() {
            assert_eq!(
                out.transaction_id, None,
                "{ctx}: nothing to write, no transaction"
            );
            assert!(
                out.files_written.is_empty() && out.files_deleted.is_empty(),
                "{ctx}"
            );
            assert_eq!(
                out.undo_available,
                self.model.undo_target.is_some(),
                "{ctx}: the undo target stays"
            );
            return;
        }
        let targets = writes
            .iter()
            .map(|e| ModelTarget {
                path: e.path.clone(),
                forward: self.model.disk.get(&e.path).cloned(),
                restore: e.target.clone(),
            })
            .collect();
        self.record_tx(ctx, &out, targets);
        assert!(out.undo_available, "{ctx}: a fresh restore can be undone");
        self.model.undo_target = Some(self.model.txs.len() - 1);
    }

    /// Applies a committed transaction to the model after checking what the store says it wrote.
    fn record_tx(&mut self, ctx: &str, out: &CodeOutcome, targets: Vec<ModelTarget>) {
        let written: Vec<String> = targets
            .iter()
            .filter(|t| t.restore.is_some())
            .map(|t| lossy(&t.path))
            .collect();
        let deleted: Vec<String> = targets
            .iter()
            .filter(|t| t.restore.is_none())
            .map(|t| lossy(&t.path))
            .collect();
        assert_eq!(out.files_written, written, "{ctx}: files written");
        assert_eq!(out.files_deleted, deleted, "{ctx}: files deleted");
        let id = out
            .transaction_id
            .clone()
            .unwrap_or_else(|| panic!("{ctx}: no transaction id"));
        assert!(
            self.model.txs.iter().all(|t| t.id != id),
            "{ctx}: transaction id reused"
        );
        let m = &mut self.model;
        m.writes += 1;
        for t in &targets {
            m.timeline.push((t.path.clone(), t.forward.clone()));
            m.owned
                .insert(t.path.clone(), (image_of_state(t.restore.as_ref()), m.writes));
            match &t.restore {
                Some(s) => m.disk.insert(t.path.clone(), s.clone()),
                None => m.disk.remove(&t.path),
            };
        }
        m.txs.push(ModelTx {
            id,
            targets,
            undone: false,
        });
    }

    fn undo(&mut self) {
        let Some(ti) = self.model.undo_target else {
            // Nothing undoable: the newest transaction (or an unknown id) must be refused.
            let id = self
                .model
                .txs
                .last()
                .map_or_else(|| "00000000-nosuchtx".to_string(), |t| t.id.clone());
            let got = self.store().undo(&id);
            assert!(
                matches!(got, Err(CheckpointError::UndoUnavailable { .. })),
                "undo of `{id}` with no undo target: {got:?}"
            );
            return;
        };
        let tx = self.model.txs[ti].clone();
        let ctx = format!("undo of {}", tx.id);
        // Only the last rewind can be undone: an older transaction is refused, nothing written (the
        // workspace is compared after this op).
        if let Some(older) = self.model.txs[..ti].last().map(|t| t.id.clone()) {
            let got = self.store().undo(&older);
            assert!(
                matches!(got, Err(CheckpointError::UndoUnavailable { .. })),
                "{ctx}: undo of the older `{older}`: {got:?}"
            );
        }
        let got = self.store().undo(&tx.id);
        let moved: Vec<String> = tx
            .targets
            .iter()
            .filter(|t| t.restore.as_ref() != self.model.disk.get(&t.path))
            .map(|t| lossy(&t.path))
            .collect();
        if !moved.is_empty() {
            match got {
                Err(CheckpointError::UndoRefused { paths }) => {
                    assert_eq!(paths, moved, "{ctx}: refused for these files")
                }
                other => panic!("{ctx}: expected UndoRefused for {moved:?}, got {other:?}"),
            }
            return;
        }
        let out = got.unwrap_or_else(|e| panic!("{ctx}: failed: {e}"));
        assert!(out.conflicts.is_empty(), "{ctx}: conflicts");
        assert!(!out.undo_available, "{ctx}: an undo cannot be undone");
        let targets = tx
            .targets
            .iter()
            .map(|t| ModelTarget {
                path: t.path.clone(),
                forward: t.restore.clone(),
                restore: t.forward.clone(),
            })
            .collect();
        self.record_tx(&ctx, &out, targets);
        self.model.txs[ti].undone = true;
        self.model.undo_target = None;
    }

    /// Every file of the workspace, walked on disk.
    fn disk_files(&self) -> BTreeMap<Vec<u8>, FileState> {
        fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<Vec<u8>, FileState>) {
            for e in fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                let meta = fs::symlink_metadata(e.path()).unwrap();
                if meta.is_dir() {
                    walk(root, &e.path(), out);
                } else {
                    let rel = e
                        .path()
                        .strip_prefix(root)
                        .unwrap()
                        .as_os_str()
                        .as_bytes()
                        .to_vec();
                    out.insert(
                        rel,
                        FileState {
                            bytes: fs::read(e.path()).unwrap(),
                            mode: meta.permissions().mode() & 0o7777,
                        },
                    );
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(&self.root, &self.root, &mut out);
        out
    }

    /// Names under `dir` (recursively) for which `bad` holds.
    fn leftovers(dir: &Path, bad: &dyn Fn(&[u8]) -> bool, out: &mut Vec<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            if bad(e.file_name().as_bytes()) {
                out.push(e.path());
            }
            if e.file_type().unwrap().is_dir() {
                Self::leftovers(&e.path(), bad, out);
            }
        }
    }

    fn check(&mut self, ops_so_far: usize) {
        let ctx = format!("after op #{ops_so_far}");
        // No transaction file in the workspace, no temp file in the sidecar.
        let mut left = Vec::new();
        let contains = |n: &[u8]| n.windows(9).any(|w| w == b".retrace-");
        Self::leftovers(&self.root, &contains, &mut left);
        let temp = |n: &[u8]| n.starts_with(b".") && n.ends_with(b".tmp");
        Self::leftovers(&self.scratch.sidecar, &temp, &mut left);
        assert!(left.is_empty(), "{ctx}: leftovers {left:?}");
        // The workspace is what the model says, byte for byte and mode for mode.
        assert_eq!(self.disk_files(), self.model.disk, "{ctx}: workspace vs model");

        let model = &self.model;
        let store = self.store.as_ref().unwrap();

        // The listing: turns, first-touch order, counts, coverage, gaps.
        let list = store.list();
        let listed: Vec<u64> = list.iter().map(|e| e.turn).collect();
        let expected: Vec<u64> = model.turns.iter().map(|t| t.number).collect();
        assert_eq!(listed, expected, "{ctx}: listed turns");
        for (entry, mt) in list.iter().zip(&model.turns) {
            let paths: Vec<String> = mt.files.iter().map(|(p, _, _)| lossy(p)).collect();
            assert_eq!(entry.paths, paths, "{ctx}: turn {} paths", mt.number);
            assert_eq!(
                entry.file_count,
                mt.files.len(),
                "{ctx}: turn {} file_count",
                mt.number
            );
            let (_, coverage, _) = Model::plan_header(&[mt]);
            assert_eq!(entry.coverage, coverage, "{ctx}: turn {} coverage", mt.number);
            assert_eq!(entry.gaps, mt.gaps, "{ctx}: turn {} gaps", mt.number);
            let bytes: u64 = mt
                .files
                .iter()
                .filter_map(|(_, s, _)| s.as_ref().map(|s| s.bytes.len() as u64))
                .sum();
            assert_eq!(entry.bytes, bytes, "{ctx}: turn {} payload bytes", mt.number);
            assert_eq!(entry.can_restore_code, Some(true), "{ctx}: turn {}", mt.number);
        }

        // One timeline: a turn's start, then its captures, then the next turn's start.
        let mut prev_seq = 0;
        for mt in &model.turns {
            let turn = store.turn(mt.number).unwrap();
            let start = turn
                .start_seq
                .unwrap_or_else(|| panic!("{ctx}: turn {} has no startSeq", mt.number));
            assert!(
                start > prev_seq,
                "{ctx}: turn {} starts at seq {start}, not after {prev_seq}",
                mt.number
            );
            prev_seq = start;
            for f in &turn.files {
                let seq = f
                    .seq
                    .unwrap_or_else(|| panic!("{ctx}: turn {} entry without seq", mt.number));
                assert!(
                    seq > prev_seq,
                    "{ctx}: turn {}: capture seq {seq} not after {prev_seq}",
                    mt.number
                );
                prev_seq = seq;
            }
        }
        assert!(
            prev_seq <= store.mutation_seq(),
            "{ctx}: a record's seq is beyond mutationSeq"
        );

        // Every before-image, byte-exact through the verified reader; after-images on the entries.
        for mt in &model.turns {
            let turn = store.turn(mt.number).unwrap();
            assert_eq!(turn.files.len(), mt.files.len());
            for (i, (key, before, after)) in mt.files.iter().enumerate() {
                let rel = RelPath::from_stored(key).unwrap();
                assert_eq!(turn.files[i].path.safe(), Some(&rel), "{ctx}: exact name");
                let what = format!("{ctx}: turn {} `{}`", mt.number, rel);
                let img = store.before_image(mt.number, &rel).unwrap();
                match (img, before) {
                    (BeforeImage::Absent, None) => {}
                    (BeforeImage::Present { mode, sha256, reader }, Some(state)) => {
                        assert_eq!(mode, Some(state.mode), "{what}: mode");
                        assert_eq!(sha256, Some(sha256_bytes(&state.bytes)), "{what}: sha256");
                        let bytes = reader.read_all().unwrap();
                        assert!(bytes == state.bytes, "{what}: bytes differ");
                    }
                    (img, before) => panic!("{what}: store says {img:?}, model says {before:?}"),
                }
                assert_eq!(&turn.files[i].after, after, "{what}: after-image on the entry");
            }
        }

        // state.json: Retrace's last writes, in the order they happened (one transaction's writes
        // share its sequence number; everything else has its own).
        let owned = &store.state().owned;
        let keys: Vec<Vec<u8>> = owned.keys().map(|k| k.as_bytes().to_vec()).collect();
        let model_keys: Vec<Vec<u8>> = model.owned.keys().cloned().collect();
        assert_eq!(keys, model_keys, "{ctx}: owned paths");
        let mut order: Vec<(u64, u64, String)> = Vec::new();
        for (k, o) in owned {
            let (image, write) = &model.owned[k.as_bytes()];
            assert_eq!(&o.image, image, "{ctx}: owned image of `{k}`");
            assert!(
                o.seq <= store.mutation_seq(),
                "{ctx}: owned seq beyond mutationSeq"
            );
            order.push((*write, o.seq, k.to_lossy()));
        }
        order.sort();
        for w in order.windows(2) {
            assert_eq!(
                w[0].0.cmp(&w[1].0),
                w[0].1.cmp(&w[1].1),
                "{ctx}: owned seqs of `{}` and `{}` do not follow the order of the writes",
                w[0].2,
                w[1].2
            );
        }

        // The mutation sequence never goes back, not even across a reopen.
        assert!(
            store.mutation_seq() >= self.last_seq,
            "{ctx}: mutationSeq went back"
        );

        // Turn numbers: the next one is beyond everything handed out (and what the log knows).
        let next = store.next_turn();
        assert!(
            model.issued.iter().all(|&n| n < next),
            "{ctx}: next_turn {next} reuses a number"
        );
        assert!(
            model.log_max.is_none_or(|m| m < next),
            "{ctx}: next_turn ignores the log"
        );
        assert_eq!(store.current_turn(), model.current.map(|i| model.turns[i].number));

        // Transactions: every committed one is known, in its state; undo would take back the right one.
        let txs: BTreeMap<&str, TxState> = store.transactions().map(|m| (m.id.as_str(), m.state)).collect();
        let want: BTreeMap<&str, TxState> = model
            .txs
            .iter()
            .map(|t| {
                let state = if t.undone {
                    TxState::Undone
                } else {
                    TxState::Committed
                };
                (t.id.as_str(), state)
            })
            .collect();
        assert_eq!(txs, want, "{ctx}: transactions");
        assert_eq!(
            store.undo_target().map(|m| m.id.as_str()),
            model.undo_target.map(|i| model.txs[i].id.as_str()),
            "{ctx}: undo target"
        );

        let report = store.fsck();
        assert!(report.ok, "{ctx}: fsck: {:#?}", report.problems);
        let serious: Vec<_> = report
            .problems
            .iter()
            .filter(|p| p.severity >= Severity::Warning)
            .collect();
        assert!(serious.is_empty(), "{ctx}: fsck: {serious:#?}");
        self.last_seq = store.mutation_seq();
    }

    /// Plans (without committing) restores and compares each with the model: to every turn when
    /// `all`, else to the oldest, the newest and one more (rotating with `ops_so_far`), which keeps
    /// the cost per step bounded.
    fn check_plans(&self, ops_so_far: usize, all: bool) {
        let store = self.store.as_ref().unwrap();
        let n = self.model.turns.len();
        for (idx, mt) in self.model.turns.iter().enumerate() {
            if !all && idx != 0 && idx + 1 != n && idx != ops_so_far % n {
                continue;
            }
            let plan = store.plan_restore(mt.number).unwrap();
            let (files, spanned) = self.expect_restore(idx);
            let ctx = format!("after op #{ops_so_far}: plan of turn {}", mt.number);
            Self::check_plan(&ctx, &plan.plan, mt.number, &files, &spanned);
        }
    }
}

fn run(ops: &[Op]) {
    let mut h = Harness::new();
    h.check(0);
    for (i, op) in ops.iter().enumerate() {
        h.apply(op);
        h.check(i + 1);
        h.check_plans(i + 1, false);
    }
    // One last restart: everything must have been durable.
    h.apply(&Op::Reopen);
    h.check(ops.len() + 1);
    h.check_plans(ops.len() + 1, true);
}

proptest! {
    #[test]
    fn store_matches_model(ops in proptest::collection::vec(op_strategy(), 1..40)) {
        run(&ops);
    }
}

fn plain(index: usize) -> Name {
    Name {
        index,
        spelling: Spelling::Plain,
    }
}

/// A fixed sequence touching every kind of content and name, so a regression shows up even with
/// `PROPTEST_CASES=1`.
#[test]
fn every_kind_of_content_and_name_round_trips() {
    let mut ops = Vec::new();
    for (index, c) in (0..NAMES.len()).zip([0, 2, 3, 5, 1]) {
        let spelling = [Spelling::Plain, Spelling::DotSlash, Spelling::Absolute][index % 3];
        ops.push(Op::Write {
            name: Name { index, spelling },
            content: c,
        });
    }
    ops.push(Op::NewTurn { log_jump: None });
    for index in 0..NAMES.len() {
        for spelling in [Spelling::Plain, Spelling::DotSlash, Spelling::Absolute] {
            ops.push(Op::Write {
                name: Name { index, spelling },
                content: (index + 1) % CONTENTS,
            });
        }
    }
    ops.push(Op::Chmod {
        name: Name {
            index: 2,
            spelling: Spelling::Absolute,
        },
        mode: 4,
    });
    ops.push(Op::Reopen);
    ops.push(Op::Move {
        from: Name {
            index: 2,
            spelling: Spelling::Plain,
        },
        to: Name {
            index: 3,
            spelling: Spelling::DotSlash,
        },
    });
    ops.push(Op::Bash {
        command: 0,
        side_effect: Some((0, 1)),
    });
    ops.push(Op::Delete {
        name: Name {
            index: 0,
            spelling: Spelling::Absolute,
        },
    });
    ops.push(Op::NewTurn { log_jump: Some(3) });
    ops.push(Op::Reopen);
    run(&ops);
}

/// A turn with no capture, then a restart: the sequence number the turn took must not be handed out
/// again (this property test caught it while `startSeq` was being introduced).
#[test]
fn a_turn_without_captures_keeps_its_sequence_across_a_restart() {
    run(&[
        Op::NewTurn { log_jump: None },
        Op::Reopen,
        Op::NewTurn { log_jump: None },
    ]);
}

/// Restores, external edits of every kind, each conflict reason and choice, and undo (allowed,
/// refused for a mode-only change and for a recreated file, unavailable), in a fixed order, so each
/// path through plan, commit and undo runs even with `PROPTEST_CASES=1`.
#[test]
fn restores_conflicts_and_undo_in_a_fixed_order() {
    let (first, second) = (0, 1);
    let restore = |turn, on_conflict| Op::Restore { turn, on_conflict };
    let write = |index, content| Op::Write {
        name: plain(index),
        content,
    };
    use OnConflict::{Overwrite, Refuse, Skip};
    run(&[
        write(0, 4),
        write(3, 2),
        Op::NewTurn { log_jump: None },
        write(0, 0),
        Op::Move {
            from: plain(3),
            to: plain(2),
        },
        write(4, 5),
        // A clean restore; undo refused after a mode-only change, allowed once the mode is back.
        restore(second, Refuse),
        Op::ExternalChmod { name: 0, mode: 3 },
        Op::Undo,
        Op::ExternalChmod { name: 0, mode: 2 },
        Op::Undo,
        Op::Undo,
        restore(second, Refuse),
        Op::Reopen,
        // A file Retrace wrote is gone: external_change; skip writes nothing, overwrite writes it.
        Op::ExternalDelete { name: 3 },
        restore(second, Refuse),
        restore(second, Skip),
        restore(second, Overwrite),
        // The restores' own writes are no conflict for a restore further back.
        restore(first, Refuse),
        Op::NewTurn { log_jump: None },
        write(0, 3),
        write(2, 1),
        Op::Chmod {
            name: plain(0),
            mode: 3,
        },
        // manual_edit, mode_change and deleted_and_recreated.
        Op::ExternalEdit { name: 0, content: 2 },
        Op::ExternalChmod { name: 2, mode: 4 },
        Op::ExternalEdit { name: 4, content: 0 },
        restore(first, Refuse),
        restore(first, Skip),
        restore(first, Overwrite),
        // Undo refused while a file the restore deleted is back, allowed once it is gone again:
        // the user's bytes come back.
        Op::ExternalEdit { name: 0, content: 4 },
        Op::Undo,
        Op::ExternalDelete { name: 0 },
        Op::Undo,
        Op::Revert {
            name: plain(0),
            on_conflict: Refuse,
        },
        write(1, 4),
        Op::Undo,
    ]);
}

/// Two non-UTF-8 names with one lossy spelling (`caf\xe9.bin`, `caf\xff.bin`) are two paths: a
/// restore must plan and restore both (the restore set was once keyed by the lossy spelling, and
/// the second file was silently left as it was).
#[test]
fn two_names_with_one_lossy_spelling_are_both_restored() {
    run(&[
        Op::Write {
            name: plain(2),
            content: 0,
        },
        Op::Write {
            name: plain(4),
            content: 3,
        },
        Op::Restore {
            turn: 0,
            on_conflict: OnConflict::Refuse,
        },
    ]);
}

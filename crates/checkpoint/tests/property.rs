#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Model-based property test of the checkpoint store (TESTING.md layer 2).
//!
//! Random sequences of edits (create / modify, delete, move, chmod, a tool that touches two paths at
//! once), shell commands (a coverage gap, sometimes with an untracked side effect on disk), new turns
//! and store reopens run against a real store on a scratch workspace and against a small in-memory
//! model. Every edit goes through the seam exactly as the agent drives it: `capture_before` of the
//! preview's changes, then the edit on disk, then `capture_after` of the previewed paths.
//!
//! The model knows, per turn, the paths in first-touch order and each one's state (exists? bytes,
//! mode) at that first touch, the gap the turn recorded, and the last after-image Retrace wrote per
//! path. After every step the store must agree with it: the listing, every before-image (read through
//! the verified reader), the after-images on the entries and in `state.json`, turn numbering and fsck.
//!
//! Contents include binary with NULs, empty, CRLF, invalid UTF-8 and a file larger than the copy
//! chunk; names include a non-UTF-8 one, a nested one, and each name is spelled three ways (`x`,
//! `./x`, `<root>/x`), which must all be the same path.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use retrace_checkpoint::model::Image;
use retrace_checkpoint::{BeforeImage, BeginTurn, Change, CheckpointStore, StoreOptions};
use retrace_fsutil::{sha256_bytes, Fs, RelPath};
use retrace_protocol::{ChangeKind, Coverage, Gap, GapReason, Severity};
use retrace_testkit::Scratch;
use time::OffsetDateTime;

/// Workspace names the ops pick from: plain, text, non-UTF-8, nested.
const NAMES: [&[u8]; 4] = [b"a", b"b.txt", b"caf\xe9.bin", b"d/x.txt"];

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

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (name_strategy(), 0..CONTENTS).prop_map(|(name, content)| Op::Write { name, content }),
        1 => (name_strategy(), name_strategy(), 0..CONTENTS)
            .prop_map(|(a, b, content)| Op::WriteTwo { a, b, content }),
        2 => name_strategy().prop_map(|name| Op::Delete { name }),
        2 => (name_strategy(), name_strategy()).prop_map(|(from, to)| Op::Move { from, to }),
        2 => (name_strategy(), 0..MODES.len()).prop_map(|(name, mode)| Op::Chmod { name, mode }),
        2 => proptest::option::weighted(0.2, 1..4u64).prop_map(|log_jump| Op::NewTurn { log_jump }),
        1 => Just(Op::Reopen),
        1 => (0..COMMANDS.len(), proptest::option::of((0..NAMES.len(), 0..CONTENTS)))
            .prop_map(|(command, side_effect)| Op::Bash { command, side_effect }),
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

/// One turn as the model knows it.
#[derive(Debug, Clone)]
struct ModelTurn {
    number: u64,
    /// First-touch order: path, state at first touch, the last after-image written in this turn.
    files: Vec<(Vec<u8>, Option<FileState>, Option<Image>)>,
    gaps: Vec<Gap>,
}

/// The whole model.
#[derive(Debug, Default)]
struct Model {
    /// The workspace: relative path bytes → state.
    disk: BTreeMap<Vec<u8>, FileState>,
    turns: Vec<ModelTurn>,
    /// Index in `turns` of the open turn.
    current: Option<usize>,
    /// Last after-image Retrace wrote per path, and the order of that write.
    owned: BTreeMap<Vec<u8>, (Image, u64)>,
    writes: u64,
    /// Every turn number handed out.
    issued: Vec<u64>,
    /// The largest turn number the (simulated) session log knows.
    log_max: Option<u64>,
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
            files: Vec::new(),
            gaps: Vec::new(),
        });
        self.model.current = Some(self.model.turns.len() - 1);
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
                turn.files
                    .push((key.clone(), self.model.disk.get(&key).cloned(), None));
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
    }

    fn kind_of(&self, key: &[u8]) -> ChangeKind {
        if self.model.disk.contains_key(key) {
            ChangeKind::Modify
        } else {
            ChangeKind::Create
        }
    }

    /// Writes a file on disk and in the model (as an edit tool or a shell would).
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
                // At most one gap per reason and path: the first command line stays.
                if !turn
                    .gaps
                    .iter()
                    .any(|g| g.reason == gap.reason && g.path == gap.path)
                {
                    turn.gaps.push(gap);
                }
                if let Some((name, c)) = side_effect {
                    // Untracked: no capture, no after-image.
                    self.write_file(NAMES[name], content(c));
                }
            }
        }
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

    fn check(&mut self, ops_so_far: usize) {
        let ctx = format!("after op #{ops_so_far}");
        // The test's own bookkeeping: the workspace is what the model says.
        assert_eq!(self.disk_files(), self.model.disk, "{ctx}: workspace vs model");

        let model = &self.model;
        let store = self.store.as_ref().unwrap();

        // The listing: turns, first-touch order, counts, coverage, gaps.
        let list = store.list();
        let listed: Vec<u64> = list.iter().map(|e| e.turn).collect();
        let expected: Vec<u64> = model.turns.iter().map(|t| t.number).collect();
        assert_eq!(listed, expected, "{ctx}: listed turns");
        for (entry, mt) in list.iter().zip(&model.turns) {
            let paths: Vec<String> = mt
                .files
                .iter()
                .map(|(p, _, _)| String::from_utf8_lossy(p).into_owned())
                .collect();
            assert_eq!(entry.paths, paths, "{ctx}: turn {} paths", mt.number);
            assert_eq!(
                entry.file_count,
                mt.files.len(),
                "{ctx}: turn {} file_count",
                mt.number
            );
            let coverage = if !mt.gaps.is_empty() {
                Coverage::Partial
            } else if mt.files.is_empty() {
                Coverage::None
            } else {
                Coverage::Complete
            };
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

        // state.json: Retrace's last writes, in the order they happened.
        let owned = &store.state().owned;
        let keys: Vec<Vec<u8>> = owned.keys().map(|k| k.as_bytes().to_vec()).collect();
        let model_keys: Vec<Vec<u8>> = model.owned.keys().cloned().collect();
        assert_eq!(keys, model_keys, "{ctx}: owned paths");
        for (k, o) in owned {
            assert_eq!(
                o.image,
                model.owned[k.as_bytes()].0,
                "{ctx}: owned image of `{k}`"
            );
            assert!(
                o.seq <= store.mutation_seq(),
                "{ctx}: owned seq beyond mutationSeq"
            );
        }
        let mut by_seq: Vec<(u64, Vec<u8>)> = owned
            .iter()
            .map(|(k, o)| (o.seq, k.as_bytes().to_vec()))
            .collect();
        by_seq.sort();
        by_seq.dedup_by_key(|(s, _)| *s);
        assert_eq!(by_seq.len(), owned.len(), "{ctx}: owned seqs are distinct");
        let mut by_write: Vec<(u64, Vec<u8>)> =
            model.owned.iter().map(|(k, (_, w))| (*w, k.clone())).collect();
        by_write.sort();
        let a: Vec<&Vec<u8>> = by_seq.iter().map(|(_, k)| k).collect();
        let b: Vec<&Vec<u8>> = by_write.iter().map(|(_, k)| k).collect();
        assert_eq!(a, b, "{ctx}: owned seqs follow the order of the writes");

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
}

fn run(ops: &[Op]) {
    let mut h = Harness::new();
    h.check(0);
    for (i, op) in ops.iter().enumerate() {
        h.apply(op);
        h.check(i + 1);
    }
    // One last restart: everything must have been durable.
    h.apply(&Op::Reopen);
    h.check(ops.len() + 1);
}

proptest! {
    #[test]
    fn store_matches_model(ops in proptest::collection::vec(op_strategy(), 1..30)) {
        run(&ops);
    }
}

/// A fixed sequence touching every kind of content and name, so a regression shows up even with
/// `PROPTEST_CASES=1`.
#[test]
fn every_kind_of_content_and_name_round_trips() {
    let mut ops = Vec::new();
    for (index, c) in (0..NAMES.len()).zip([0, 2, 3, 5]) {
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

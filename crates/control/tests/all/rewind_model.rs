//! Model-based property test of the controller (TESTING.md layer 2), through a session handle:
//! random sequences of {turn with file edits through a scripted model, external edit, rewind(n,
//! code|conversation|both, on_conflict, in place or not), undo, fork, switch} against a small model
//! of the workspace files, of what Retrace last wrote (the ownership proofs), of the write timeline,
//! and of the heads. After every step the real workspace, every head's transcript (its user
//! messages and notes) and the selected head must equal the model, and each operation must succeed
//! or be refused exactly when the model says so (with the error code it predicts: `refused` for an
//! action that is not available, `conflict` for conflicted files under `refuse`, `not_found` for a
//! turn that does not exist), with the plan's blockers and the files written, deleted and
//! conflicted that the model predicts.
//!
//! Cases: `PROPTEST_CASES` (default 64). The worlds live on `/dev/shm` when it exists, so the
//! store's fsyncs cost little (64 cases of up to 23 operations take about half a second there, and
//! about 30 s on an ext4 disk, which is why sequences are shorter without it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::World;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use retrace_control::SessionHandle;
use retrace_protocol::{
    CommitRewind, Error, ErrorCode, ErrorDetails, FileAction, ForkRequest, HeadId, OnConflict, PlanBlocker,
    PrepareRewind, RewindResult, RewindScope, Role, SwitchRequest, UndoRequest,
};
use serde_json::{json, Value};

/// The workspace paths the cases play with (nested ones make restores create directories).
const PATHS: [&str; 4] = ["a.txt", "b.bin", "d/c.txt", "d/e/f.txt"];
/// Contents the agent writes (JSON strings, so UTF-8): empty, CRLF, non-ASCII.
const AGENT: [&str; 5] = ["", "one\n", "two\r\nlines\r\n", "ünïcødé ✓\n", "x"];
/// Contents an external editor writes: binary and non-UTF-8 too, and one the agent also writes.
const EXTERNAL: [&[u8]; 4] = [b"\xff\xfe\x00 not utf-8 \x80", b"edited by hand\n", b"", b"one\n"];

#[derive(Debug, Clone)]
enum FileOp {
    Write(usize, usize),
    Delete(usize),
    Move(usize, usize),
}

#[derive(Debug, Clone)]
enum Op {
    Turn(Vec<FileOp>),
    External {
        path: usize,
        content: Option<usize>,
    },
    Rewind {
        turn: usize,
        scope: RewindScope,
        on_conflict: OnConflict,
        in_place: bool,
    },
    Undo,
    Fork {
        turn: usize,
        select: bool,
    },
    Switch(usize),
}

fn file_op() -> impl Strategy<Value = FileOp> {
    prop_oneof![
        3 => (0..PATHS.len(), 0..AGENT.len()).prop_map(|(p, c)| FileOp::Write(p, c)),
        1 => (0..PATHS.len()).prop_map(FileOp::Delete),
        1 => (0..PATHS.len(), 0..PATHS.len()).prop_map(|(f, t)| FileOp::Move(f, t)),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let scope = prop_oneof![
        Just(RewindScope::Code),
        Just(RewindScope::Conversation),
        Just(RewindScope::Both)
    ];
    let on_conflict = prop_oneof![
        Just(OnConflict::Refuse),
        Just(OnConflict::Skip),
        Just(OnConflict::Overwrite)
    ];
    prop_oneof![
        4 => proptest::collection::vec(file_op(), 0..4).prop_map(Op::Turn),
        2 => (0..PATHS.len(), proptest::option::weighted(0.8, 0..EXTERNAL.len()))
            .prop_map(|(path, content)| Op::External { path, content }),
        4 => (0..8usize, scope, on_conflict, proptest::bool::weighted(0.8)).prop_map(
            |(turn, scope, on_conflict, in_place)| Op::Rewind { turn, scope, on_conflict, in_place }
        ),
        2 => Just(Op::Undo),
        1 => (0..8usize, any::<bool>()).prop_map(|(turn, select)| Op::Fork { turn, select }),
        1 => (0..8usize).prop_map(Op::Switch),
    ]
}

/// A file's state: `None` = absent.
type State = Option<Vec<u8>>;

/// One thing on a head's path that the model tracks: a turn's user message, or a note naming files.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    User(u64),
    Note(BTreeSet<String>),
}

#[derive(Debug, Clone)]
struct Head {
    id: HeadId,
    items: Vec<Item>,
    retired: bool,
}

impl Head {
    fn has_turn(&self, n: u64) -> bool {
        self.items.contains(&Item::User(n))
    }

    /// The items before turn `n`'s user message.
    fn before(&self, n: u64) -> Vec<Item> {
        let at = self.items.iter().position(|i| *i == Item::User(n)).unwrap();
        self.items[..at].to_vec()
    }
}

/// What undo would take back.
#[derive(Debug, Clone)]
struct UndoTarget {
    /// (path, what the rewind wrote, what was there before, Retrace's proof before: what the undo
    /// gives back with the bytes, SPEC §5.5).
    targets: Vec<(String, State, State, Option<State>)>,
    parent: usize,
    new_head: Option<usize>,
}

/// One point on the timeline of Retrace's writes: a turn's first-touch before-images, or the
/// images a restore or undo replaced.
#[derive(Debug, Clone)]
struct Moment {
    turn: Option<u64>,
    images: Vec<(String, State)>,
}

#[derive(Debug)]
struct Model {
    disk: BTreeMap<String, Vec<u8>>,
    owned: BTreeMap<String, State>,
    timeline: Vec<Moment>,
    next_turn: u64,
    heads: Vec<Head>,
    selected: usize,
    undo: Option<UndoTarget>,
}

impl Model {
    fn state(&self, p: &str) -> State {
        self.disk.get(p).cloned()
    }

    fn set(&mut self, p: &str, s: &State) {
        match s {
            Some(b) => self.disk.insert(p.to_string(), b.clone()),
            None => self.disk.remove(p),
        };
    }

    /// The restore set of turn `n`: each path's earliest image at or after turn n started.
    fn targets(&self, n: u64) -> Vec<(String, State)> {
        let start = self.timeline.iter().position(|m| m.turn == Some(n)).unwrap();
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for m in &self.timeline[start..] {
            for (p, img) in &m.images {
                if seen.insert(p.clone()) {
                    out.push((p.clone(), img.clone()));
                }
            }
        }
        out
    }
}

/// What the model expects of a rewind that is not refused.
#[derive(Debug, PartialEq, Eq)]
struct Expected {
    written: BTreeSet<String>,
    deleted: BTreeSet<String>,
    conflicts: BTreeSet<String>,
}

fn sorted(v: &[String]) -> BTreeSet<String> {
    v.iter().cloned().collect()
}

/// Whether `r` failed with `code`.
fn failed_with<T>(r: &Result<T, Error>, code: ErrorCode) -> bool {
    matches!(r, Err(e) if e.code == code)
}

struct Run {
    /// Declared before the world, so the session goes before its runtime and its files.
    h: SessionHandle,
    w: World,
    m: Model,
}

/// A tmpfs for the worlds, where fsync costs little.
fn shm() -> Option<&'static Path> {
    let p = Path::new("/dev/shm");
    p.is_dir().then_some(p)
}

/// The longest sequence: shorter where every fsync reaches a disk, to stay well under 30 s.
fn max_ops() -> usize {
    if shm().is_some() {
        24
    } else {
        eprintln!("rewind_model: no /dev/shm, so the worlds are on disk; sequences are kept to 8 operations");
        8
    }
}

impl Run {
    fn new() -> Run {
        let w = World::new_in(shm());
        let h = w.open();
        let m = Model {
            disk: BTreeMap::new(),
            owned: BTreeMap::new(),
            timeline: Vec::new(),
            next_turn: 0,
            heads: vec![Head {
                id: w.head(&h),
                items: Vec::new(),
                retired: false,
            }],
            selected: 0,
            undo: None,
        };
        Run { h, w, m }
    }

    fn step(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::Turn(ops) => self.turn(ops),
            Op::External { path, content } => {
                let p = PATHS[*path];
                match content {
                    Some(c) => {
                        self.w.put(p, EXTERNAL[*c]);
                        self.m.disk.insert(p.to_string(), EXTERNAL[*c].to_vec());
                    }
                    None => {
                        if self.m.disk.remove(p).is_some() {
                            std::fs::remove_file(self.w.at(p)).unwrap();
                        }
                    }
                }
                Ok(())
            }
            Op::Rewind {
                turn,
                scope,
                on_conflict,
                in_place,
            } => self.rewind(*turn, *scope, *on_conflict, *in_place),
            Op::Undo => self.undo(),
            Op::Fork { turn, select } => self.fork(*turn, *select),
            Op::Switch(i) => {
                let i = i % self.m.heads.len();
                let id = self.m.heads[i].id.clone();
                let r = self.w.run(self.h.switch(SwitchRequest { head: id.to_string() }));
                if self.m.heads[i].retired {
                    prop_assert!(failed_with(&r, ErrorCode::Refused), "{r:?}");
                } else {
                    prop_assert_eq!(r.unwrap().head_id, id);
                    self.m.selected = i;
                }
                Ok(())
            }
        }
    }

    fn turn(&mut self, ops: &[FileOp]) -> Result<(), TestCaseError> {
        let n = self.m.next_turn;
        let mut calls: Vec<Value> = Vec::new();
        let mut touched: Vec<(String, State)> = Vec::new();
        let mut touch = |m: &Model, p: &str| {
            if !touched.iter().any(|(q, _)| q == p) {
                touched.push((p.to_string(), m.state(p)));
            }
        };
        for op in ops {
            // Ops that would fail on the current files become writes, so every call succeeds.
            let op = match *op {
                FileOp::Delete(p) if !self.m.disk.contains_key(PATHS[p]) => FileOp::Write(p, 1),
                FileOp::Move(f, t)
                    if f == t
                        || !self.m.disk.contains_key(PATHS[f])
                        || self.m.disk.contains_key(PATHS[t]) =>
                {
                    FileOp::Write(f, 2)
                }
                ref other => other.clone(),
            };
            match op {
                FileOp::Write(p, c) => {
                    touch(&self.m, PATHS[p]);
                    calls.push(
                        json!({"name": "write_file", "arguments": {"path": PATHS[p], "content": AGENT[c]}}),
                    );
                    self.m
                        .disk
                        .insert(PATHS[p].to_string(), AGENT[c].as_bytes().to_vec());
                }
                FileOp::Delete(p) => {
                    touch(&self.m, PATHS[p]);
                    calls.push(json!({"name": "delete_file", "arguments": {"path": PATHS[p]}}));
                    self.m.disk.remove(PATHS[p]);
                }
                FileOp::Move(f, t) => {
                    touch(&self.m, PATHS[f]);
                    touch(&self.m, PATHS[t]);
                    calls.push(json!({"name": "move_file", "arguments": {"from": PATHS[f], "to": PATHS[t]}}));
                    let bytes = self.m.disk.remove(PATHS[f]).unwrap();
                    self.m.disk.insert(PATHS[t].to_string(), bytes);
                }
            }
        }
        let (report, _) = self.w.turn(&self.h, &format!("p{n}"), calls);
        prop_assert_eq!(report.turn, n, "turn numbers are never reused");
        prop_assert_eq!(&report.head_id, &self.m.heads[self.m.selected].id);
        for (p, _) in &touched {
            let now = self.m.state(p);
            self.m.owned.insert(p.clone(), now);
        }
        self.m.timeline.push(Moment {
            turn: Some(n),
            images: touched,
        });
        self.m.next_turn += 1;
        let sel = self.m.selected;
        self.m.heads[sel].items.push(Item::User(n));
        self.m.undo = None;
        Ok(())
    }

    fn rewind(
        &mut self,
        turn: usize,
        scope: RewindScope,
        on_conflict: OnConflict,
        in_place: bool,
    ) -> Result<(), TestCaseError> {
        if self.m.next_turn == 0 {
            let r = self
                .w
                .run(self.h.prepare_rewind(PrepareRewind { turn: 0, scope }));
            prop_assert!(failed_with(&r, ErrorCode::NotFound), "{r:?}");
            return Ok(());
        }
        let n = turn as u64 % self.m.next_turn;
        let plan = self
            .w
            .run(self.h.prepare_rewind(PrepareRewind { turn: n, scope }))
            .unwrap();
        let wants_files = scope != RewindScope::Conversation;
        let wants_conv = scope != RewindScope::Code;
        let visible = self.m.heads[self.m.selected].has_turn(n);
        prop_assert_eq!(plan.can_conversation, visible);
        prop_assert!(plan.can_files);
        prop_assert!(!plan.requires_confirmation);

        // The model's plan: per path, unchanged, clean or conflicted (SPEC §5.2).
        let mut clean = Vec::new();
        let mut conflicted = Vec::new();
        // Files already in their target state: a commit makes them Retrace's (issue 25 item 6).
        let mut unchanged = Vec::new();
        if wants_files {
            for (p, target) in self.m.targets(n) {
                let cur = self.m.state(&p);
                if cur == target {
                    unchanged.push((p, cur));
                    continue;
                }
                let proof = self.m.owned.get(&p).cloned().flatten();
                if proof != cur {
                    conflicted.push((p, target, cur));
                } else {
                    clean.push((p, target, cur));
                }
            }
        }
        let planned: BTreeSet<String> = plan.conflicts.iter().map(|c| c.path.clone()).collect();
        let want: BTreeSet<String> = conflicted.iter().map(|c| c.0.clone()).collect();
        prop_assert_eq!(&planned, &want, "conflicts of the plan");
        // What a conflicted file's `overwrite` would do: put the target back (write or delete).
        for f in &plan.files {
            let on_overwrite = conflicted.iter().find(|c| c.0 == f.path).map(|c| match c.1 {
                Some(_) => FileAction::Write,
                None => FileAction::Delete,
            });
            prop_assert_eq!(f.on_overwrite, on_overwrite, "on_overwrite of {}", f.path);
        }
        // The plan's blockers: the conversation off this head, then the conflicts under `refuse`.
        let unavailable = wants_conv && !visible;
        let mut blockers = Vec::new();
        if unavailable {
            blockers.push(PlanBlocker::Unavailable {
                reason: "not on this head".into(),
            });
        }
        if !conflicted.is_empty() {
            blockers.push(PlanBlocker::Conflicts {
                count: conflicted.len(),
            });
        }
        prop_assert_eq!(&plan.blockers, &blockers, "blockers of the plan");
        let before_heads = self.w.heads(&self.h).len();

        let r = self.w.run(self.h.commit_rewind(CommitRewind {
            plan_id: plan.plan_id.clone(),
            confirm: false,
            on_conflict,
            in_place,
        }));
        let blocked = !conflicted.is_empty() && on_conflict == OnConflict::Refuse;
        if unavailable || blocked {
            // An unavailable half is checked first, whatever the files.
            if unavailable {
                prop_assert!(failed_with(&r, ErrorCode::Refused), "{r:?}");
            } else {
                prop_assert!(failed_with(&r, ErrorCode::Conflict), "{r:?}");
                let listed: BTreeSet<String> = match r {
                    Err(Error {
                        details: Some(ErrorDetails::Conflicts { conflicts }),
                        ..
                    }) => conflicts.into_iter().map(|c| c.path).collect(),
                    other => return Err(TestCaseError::fail(format!("no conflicts listed: {other:?}"))),
                };
                prop_assert_eq!(&listed, &want, "conflicts of the refusal");
            }
            prop_assert_eq!(
                self.w.heads(&self.h).len(),
                before_heads,
                "a refused rewind makes no head"
            );
            return Ok(());
        }
        let r: RewindResult = r.unwrap();
        prop_assert!(r.ok && !r.partial, "{r:?}");
        prop_assert_eq!(r.conversation_forked, wants_conv);
        prop_assert_eq!(&r.prompt, &format!("p{n}"));

        let parent = self.m.selected;
        let mut new_head = None;
        if wants_conv {
            let items = self.m.heads[parent].before(n);
            self.m.heads.push(Head {
                id: r.head_id.clone(),
                items,
                retired: false,
            });
            new_head = Some(self.m.heads.len() - 1);
            if in_place {
                self.m.selected = self.m.heads.len() - 1;
            }
        } else {
            prop_assert_eq!(&r.head_id, &self.m.heads[parent].id);
        }

        let mut inputs = clean;
        if on_conflict == OnConflict::Overwrite {
            inputs.extend(conflicted.iter().cloned());
        }
        let expected = Expected {
            written: inputs
                .iter()
                .filter(|i| i.1.is_some())
                .map(|i| i.0.clone())
                .collect(),
            deleted: inputs
                .iter()
                .filter(|i| i.1.is_none())
                .map(|i| i.0.clone())
                .collect(),
            conflicts: want,
        };
        let got = Expected {
            written: sorted(&r.files_written),
            deleted: sorted(&r.files_deleted),
            conflicts: r.conflicts.iter().map(|c| c.path.clone()).collect(),
        };
        prop_assert_eq!(got, expected);

        let proofs: Vec<Option<State>> = inputs.iter().map(|i| self.m.owned.get(&i.0).cloned()).collect();
        for (p, target, _) in &inputs {
            self.m.set(p, target);
            self.m.owned.insert(p.clone(), target.clone());
        }
        for (p, cur) in unchanged {
            self.m.owned.insert(p, cur);
        }
        let wrote = !inputs.is_empty();
        prop_assert_eq!(r.transaction_id.is_some(), wrote || wants_conv);
        if wrote {
            self.m.timeline.push(Moment {
                turn: None,
                images: inputs
                    .iter()
                    .map(|(p, _, cur)| (p.clone(), cur.clone()))
                    .collect(),
            });
            if scope == RewindScope::Code {
                let files = inputs.iter().map(|i| i.0.clone()).collect();
                self.m.heads[parent].items.push(Item::Note(files));
            }
        }
        if wrote || wants_conv {
            self.m.undo = Some(UndoTarget {
                targets: inputs
                    .into_iter()
                    .zip(proofs)
                    .map(|((p, wrote, before), proof)| (p, wrote, before, proof))
                    .collect(),
                parent,
                new_head,
            });
            prop_assert!(r.undo_available);
        } else {
            // Nothing written: the rewind before it stays the one undo takes back, but this
            // result, which changed nothing, offers no undo of its own.
            prop_assert!(!r.undo_available);
        }
        Ok(())
    }

    fn undo(&mut self) -> Result<(), TestCaseError> {
        let r = self.w.run(self.h.undo(UndoRequest::default()));
        let Some(u) = self.m.undo.clone() else {
            prop_assert!(failed_with(&r, ErrorCode::Refused), "{r:?}");
            return Ok(());
        };
        let moved: BTreeSet<String> = u
            .targets
            .iter()
            .filter(|(p, wrote, _, _)| self.m.state(p) != *wrote)
            .map(|t| t.0.clone())
            .collect();
        if !moved.is_empty() {
            prop_assert!(failed_with(&r, ErrorCode::Refused), "{r:?}");
            // The refusal names the files that changed since the rewind.
            let named: BTreeSet<String> = match r {
                Err(Error {
                    details: Some(ErrorDetails::Paths { paths }),
                    ..
                }) => paths.into_iter().collect(),
                other => return Err(TestCaseError::fail(format!("no paths named: {other:?}"))),
            };
            prop_assert_eq!(&named, &moved, "paths of the refused undo");
            return Ok(());
        }
        let r = r.unwrap();
        let written: BTreeSet<String> = u
            .targets
            .iter()
            .filter(|t| t.2.is_some())
            .map(|t| t.0.clone())
            .collect();
        let deleted: BTreeSet<String> = u
            .targets
            .iter()
            .filter(|t| t.2.is_none())
            .map(|t| t.0.clone())
            .collect();
        prop_assert_eq!(sorted(&r.files_written), written.clone());
        prop_assert_eq!(sorted(&r.files_deleted), deleted.clone());
        for (p, _, before, proof) in &u.targets {
            self.m.set(p, before);
            // The proof goes back with the bytes: a hand edit the undo puts back is not Retrace's.
            match proof {
                Some(proof) => self.m.owned.insert(p.clone(), proof.clone()),
                None => self.m.owned.remove(p),
            };
        }
        if !u.targets.is_empty() {
            self.m.timeline.push(Moment {
                turn: None,
                images: u
                    .targets
                    .iter()
                    .map(|(p, wrote, _, _)| (p.clone(), wrote.clone()))
                    .collect(),
            });
        }
        if u.new_head.is_none() && !u.targets.is_empty() {
            // Undoing a code-only rewind tells the model the files are back.
            let named: BTreeSet<String> = written.union(&deleted).cloned().collect();
            let sel = self.m.selected;
            self.m.heads[sel].items.push(Item::Note(named));
        }
        if let Some(h) = u.new_head {
            if self.m.selected == h {
                self.m.selected = u.parent;
            }
            if self.m.selected != h {
                self.m.heads[h].retired = true;
            }
        }
        self.m.undo = None;
        prop_assert_eq!(&r.head_id, &self.m.heads[self.m.selected].id);
        Ok(())
    }

    fn fork(&mut self, turn: usize, select: bool) -> Result<(), TestCaseError> {
        if self.m.next_turn == 0 {
            return Ok(());
        }
        let n = turn as u64 % self.m.next_turn;
        let r = self.w.run(self.h.fork(ForkRequest {
            turn: n,
            name: None,
            select,
        }));
        let sel = self.m.selected;
        if !self.m.heads[sel].has_turn(n) {
            prop_assert!(failed_with(&r, ErrorCode::Refused), "{r:?}");
            return Ok(());
        }
        let id = r.unwrap().head_id;
        let items = self.m.heads[sel].before(n);
        self.m.heads.push(Head {
            id,
            items,
            retired: false,
        });
        if select {
            self.m.selected = self.m.heads.len() - 1;
        }
        Ok(())
    }

    /// The real workspace and heads equal the model.
    fn check(&self) -> Result<(), TestCaseError> {
        prop_assert_eq!(&self.w.files(), &self.m.disk, "workspace files");
        prop_assert_eq!(&self.w.head(&self.h), &self.m.heads[self.m.selected].id);
        let heads = self.w.heads(&self.h);
        prop_assert_eq!(heads.len(), self.m.heads.len());
        for mh in &self.m.heads {
            let h = heads.iter().find(|h| h.id == mh.id).unwrap();
            prop_assert_eq!(h.retired, mh.retired, "head {} retired", mh.id);
            prop_assert_eq!(h.selected, mh.id == self.m.heads[self.m.selected].id);
            let t = self.w.transcript(&self.h, Some(mh.id.as_str()));
            let mut items = Vec::new();
            for m in &t {
                match m.role {
                    Role::User => {
                        let n = m.turn.unwrap();
                        prop_assert_eq!(&m.content, &format!("p{n}"));
                        items.push(Item::User(n));
                    }
                    Role::System => {
                        // The note names exactly the files the code rewind wrote or deleted.
                        let named: BTreeSet<String> = PATHS
                            .iter()
                            .filter(|p| m.content.contains(&format!(" {p}")))
                            .map(|p| p.to_string())
                            .collect();
                        items.push(Item::Note(named));
                    }
                    _ => {}
                }
            }
            prop_assert_eq!(&items, &mh.items, "transcript of head {}", mh.id);
        }
        // The checkpoint list: one entry per turn, visible exactly on the selected head's path.
        let sel = &self.m.heads[self.m.selected];
        let cks = self.w.run(self.h.checkpoints()).unwrap().entries;
        prop_assert_eq!(cks.len() as u64, self.m.next_turn);
        for c in &cks {
            prop_assert_eq!(c.visible, Some(sel.has_turn(c.turn)), "turn {} visible", c.turn);
        }
        Ok(())
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        max_shrink_iters: 200,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_controller_matches_the_model(ops in proptest::collection::vec(op(), 1..max_ops())) {
        let mut run = Run::new();
        for (i, op) in ops.iter().enumerate() {
            run.step(op).map_err(|e| TestCaseError::fail(format!("step {i} {op:?}: {e}")))?;
            run.check().map_err(|e| TestCaseError::fail(format!("after step {i} {op:?}: {e}")))?;
        }
    }
}

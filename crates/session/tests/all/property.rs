//! Model-based property test of the session log (TESTING.md layer 2).
//!
//! Random sequences of turns, messages, notes, forks (from any point of any head, the empty path
//! included), selections, retirements, summaries, reopenings and torn tails run against a real
//! session and against a plain in-memory tree model in which every head simply owns a copy of its
//! path. After every step the two must agree: the heads (kind, name, parent, selected, retired,
//! message count, visible turns), each head's projection (ids, contents, roles, kinds), the turn
//! list, and each turn's boundary on each head. A refused operation must be refused for the reason
//! the model predicts and change nothing. Contents include newlines, quotes, backslashes and non-ASCII
//! text. The number of cases follows `PROPTEST_CASES`.

use std::io::Write;

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use retrace_fsutil::Fs;
use retrace_session::{
    ForkSpec, HeadId, HeadKind, MessageId, MessageKind, NewMessage, Role, Session, SessionError,
    SessionOptions, SummaryMode, SummarySpec, TurnStart,
};

#[derive(Debug, Clone)]
enum Op {
    Turn {
        head: usize,
        text: String,
    },
    Say {
        head: usize,
        tool: bool,
        text: String,
    },
    Note {
        head: usize,
    },
    EndTurn,
    Fork {
        head: usize,
        at: usize,
        rewind: bool,
        named: bool,
        select: bool,
    },
    Select {
        head: usize,
    },
    Retire {
        head: usize,
    },
    Summarize {
        head: usize,
        turn: usize,
        up_to: bool,
        select: bool,
    },
    Reopen,
    Tear {
        bytes: Vec<u8>,
    },
}

fn text() -> impl Strategy<Value = String> {
    let chars = vec!['a', 'b', ' ', '\n', '"', '\\', 'é', '雪', '😀', '{'];
    prop::collection::vec(prop::sample::select(chars), 0..8).prop_map(|c| c.into_iter().collect())
}

fn op() -> impl Strategy<Value = Op> {
    let h = 0..8usize;
    prop_oneof![
        4 => (h.clone(), text()).prop_map(|(head, text)| Op::Turn { head, text }),
        5 => (h.clone(), any::<bool>(), text()).prop_map(|(head, tool, text)| Op::Say { head, tool, text }),
        1 => h.clone().prop_map(|head| Op::Note { head }),
        1 => Just(Op::EndTurn),
        3 => (h.clone(), 0..40usize, any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(head, at, rewind, named, select)| Op::Fork { head, at, rewind, named, select }),
        2 => h.clone().prop_map(|head| Op::Select { head }),
        1 => h.clone().prop_map(|head| Op::Retire { head }),
        2 => (h, 0..8usize, any::<bool>(), any::<bool>())
            .prop_map(|(head, turn, up_to, select)| Op::Summarize { head, turn, up_to, select }),
        1 => Just(Op::Reopen),
        1 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 1..40)
            .prop_map(|bytes| Op::Tear { bytes }),
    ]
}

#[derive(Debug, Clone)]
struct MMsg {
    id: MessageId,
    content: String,
    role: Role,
    kind: MessageKind,
}

#[derive(Debug, Clone)]
struct MHead {
    id: HeadId,
    kind: HeadKind,
    name: Option<String>,
    parent: Option<usize>,
    path: Vec<usize>,
    retired: bool,
}

#[derive(Debug, Default)]
struct Model {
    msgs: Vec<MMsg>,
    heads: Vec<MHead>,
    selected: usize,
    /// (turn number, user message)
    turns: Vec<(u64, usize)>,
}

impl Model {
    fn pos(&self, h: usize, m: usize) -> Option<usize> {
        self.heads[h].path.iter().position(|&x| x == m)
    }

    fn visible_turns(&self, h: usize) -> usize {
        self.turns
            .iter()
            .filter(|(_, m)| self.pos(h, *m).is_some())
            .count()
    }
}

struct Harness {
    _tmp: tempfile::TempDir,
    dir: std::path::PathBuf,
    opts: SessionOptions,
    session: Option<Session>,
    model: Model,
}

impl Harness {
    fn new() -> Harness {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("sessions");
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let mut opts = SessionOptions {
            fs: Fs::without_sync(),
            on_warning: std::sync::Arc::new(|_| {}),
            ..SessionOptions::default()
        };
        opts.ids = crate::common::options(Fs::without_sync(), Default::default()).ids;
        let session = opts.create(&dir, &ws).unwrap();
        let model = Model {
            heads: vec![MHead {
                id: HeadId::main(),
                kind: HeadKind::Main,
                name: None,
                parent: None,
                path: Vec::new(),
                retired: false,
            }],
            ..Model::default()
        };
        Harness {
            _tmp: tmp,
            dir,
            opts,
            session: Some(session),
            model,
        }
    }

    fn s(&mut self) -> &mut Session {
        self.session.as_mut().unwrap()
    }

    fn head(&self, pick: usize) -> (usize, HeadId) {
        let h = pick % self.model.heads.len();
        (h, self.model.heads[h].id.clone())
    }

    fn push_msg(&mut self, h: usize, id: MessageId, content: String, role: Role, kind: MessageKind) {
        self.model.msgs.push(MMsg {
            id,
            content,
            role,
            kind,
        });
        let m = self.model.msgs.len() - 1;
        self.model.heads[h].path.push(m);
    }

    fn step(&mut self, op: &Op) {
        match op.clone() {
            Op::Turn { head, text } => {
                let (h, id) = self.head(head);
                let turn = self.s().next_turn();
                let r = self.s().start_turn(TurnStart {
                    turn,
                    head: id,
                    message_id: None,
                    content: text.clone(),
                });
                if self.model.heads[h].retired {
                    assert!(matches!(r, Err(SessionError::HeadRetired(_))), "{r:?}");
                    return;
                }
                let t = r.unwrap();
                assert_eq!(t.boundary.index, self.model.heads[h].path.len());
                self.push_msg(h, t.message_id, text, Role::User, MessageKind::Message);
                let m = self.model.msgs.len() - 1;
                self.model.turns.push((turn, m));
            }
            Op::Say { head, tool, text } => {
                let (h, id) = self.head(head);
                let role = if tool { Role::Tool } else { Role::Assistant };
                let r = self.s().append(&id, NewMessage::new(role, text.clone()));
                if self.model.heads[h].retired {
                    assert!(matches!(r, Err(SessionError::HeadRetired(_))), "{r:?}");
                    return;
                }
                self.push_msg(h, r.unwrap().message_id, text, role, MessageKind::Message);
            }
            Op::Note { head } => {
                let (h, id) = self.head(head);
                let r = self.s().note(&id, "note");
                if self.model.heads[h].retired {
                    assert!(matches!(r, Err(SessionError::HeadRetired(_))), "{r:?}");
                    return;
                }
                let id = r.unwrap().message_id;
                self.push_msg(h, id, "note".into(), Role::System, MessageKind::Note);
            }
            Op::EndTurn => self.s().end_turn().unwrap(),
            Op::Fork {
                head,
                at,
                rewind,
                named,
                select,
            } => {
                let (h, id) = self.head(head);
                let path = self.model.heads[h].path.clone();
                let cut = at % (path.len() + 1);
                let from = cut.checked_sub(1).map(|i| self.model.msgs[path[i]].id.clone());
                let name = named.then(|| format!("n{}", self.model.heads.len()));
                let kind = if rewind { HeadKind::Rewind } else { HeadKind::Fork };
                let spec = ForkSpec {
                    kind,
                    name: name.clone(),
                    select,
                };
                let new = self.s().fork(&id, from.as_ref(), spec).unwrap();
                assert_eq!(new.migrated_from, None);
                self.model.heads.push(MHead {
                    id: new.head,
                    kind,
                    name,
                    parent: Some(h),
                    path: path[..cut].to_vec(),
                    retired: false,
                });
                if select {
                    self.model.selected = self.model.heads.len() - 1;
                }
            }
            Op::Select { head } => {
                let (h, id) = self.head(head);
                let r = self.s().select(&id);
                if self.model.heads[h].retired {
                    assert!(matches!(r, Err(SessionError::HeadRetired(_))), "{r:?}");
                } else {
                    r.unwrap();
                    self.model.selected = h;
                }
            }
            Op::Retire { head } => {
                let (h, id) = self.head(head);
                let r = self.s().retire(&id);
                if h == self.model.selected {
                    assert!(matches!(r, Err(SessionError::RetireSelected(_))), "{r:?}");
                } else if self.model.heads[h].retired {
                    assert!(matches!(r, Err(SessionError::HeadRetired(_))), "{r:?}");
                } else {
                    r.unwrap();
                    self.model.heads[h].retired = true;
                }
            }
            Op::Summarize {
                head,
                turn,
                up_to,
                select,
            } => self.summarize(head, turn, up_to, select),
            Op::Reopen => {
                drop(self.session.take());
                let id = self.id();
                let reader = self.opts.open_reader(&self.dir, &id).unwrap();
                self.check_against(&reader, "reader after reopen");
                self.session = Some(self.opts.open_writer(&self.dir, &id).unwrap());
            }
            Op::Tear { bytes } => {
                let path = self.s().log_path().to_path_buf();
                drop(self.session.take());
                let id = self.id();
                let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                f.write_all(&bytes).unwrap();
                drop(f);
                let reader = self.opts.open_reader(&self.dir, &id).unwrap();
                assert_eq!(reader.warnings().len(), 1);
                self.check_against(&reader, "reader of a torn log");
                let writer = self.opts.open_writer(&self.dir, &id).unwrap();
                assert_eq!(writer.warnings().len(), 1);
                let data = std::fs::read(&path).unwrap();
                assert_eq!(data.last(), Some(&b'\n'), "the torn tail was cut");
                self.session = Some(writer);
            }
        }
    }

    fn id(&self) -> retrace_session::SessionId {
        let list = retrace_session::list_sessions(&self.dir, None).unwrap();
        list.sessions[0].id.clone()
    }

    fn summarize(&mut self, head: usize, turn: usize, up_to: bool, select: bool) {
        let (h, id) = self.head(head);
        if self.model.turns.is_empty() {
            return;
        }
        let (number, m) = self.model.turns[turn % self.model.turns.len()];
        let mode = if up_to {
            SummaryMode::UpTo
        } else {
            SummaryMode::From
        };
        let r = self.s().summarize(SummarySpec {
            compaction: false,
            usage: None,
            head: id,
            turn: number,
            mode,
            content: "summary".into(),
            name: None,
            select,
        });
        let Some(p) = self.model.pos(h, m) else {
            assert!(matches!(r, Err(SessionError::TurnNotVisible { .. })), "{r:?}");
            return;
        };
        let path = self.model.heads[h].path.clone();
        let regular = |range: &[usize]| {
            range
                .iter()
                .any(|&x| self.model.msgs[x].kind == MessageKind::Message)
        };
        let worth = if up_to {
            p > 0 && regular(&path[..p])
        } else {
            regular(&path[p + 1..])
        };
        if !worth {
            assert!(matches!(r, Err(SessionError::NothingToSummarize)), "{r:?}");
            return;
        }
        let new = r.unwrap();
        let at = if up_to { 0 } else { p };
        let summary_id = self.s().project(&new.head).unwrap()[at].id.clone();
        self.model.msgs.push(MMsg {
            id: summary_id,
            content: "summary".into(),
            role: Role::User,
            kind: MessageKind::Summary,
        });
        let sm = self.model.msgs.len() - 1;
        let new_path = if up_to {
            std::iter::once(sm).chain(path[p..].iter().copied()).collect()
        } else {
            path[..p].iter().copied().chain(std::iter::once(sm)).collect()
        };
        self.model.heads.push(MHead {
            id: new.head,
            kind: HeadKind::Summary,
            name: None,
            parent: Some(h),
            path: new_path,
            retired: false,
        });
        if select {
            self.model.selected = self.model.heads.len() - 1;
        }
    }

    fn check(&self, ctx: &str) {
        self.check_against(self.session.as_ref().unwrap(), ctx);
    }

    fn check_against(&self, s: &Session, ctx: &str) {
        let m = &self.model;
        assert_eq!(s.selected(), &m.heads[m.selected].id, "{ctx}: selected");
        let heads = s.heads();
        assert_eq!(heads.len(), m.heads.len(), "{ctx}: head count");
        for (i, (got, want)) in heads.iter().zip(&m.heads).enumerate() {
            let c = format!("{ctx}: head {}", want.id);
            assert_eq!(got.id, want.id, "{c}");
            assert_eq!(got.kind, want.kind, "{c}: kind");
            assert_eq!(got.name, want.name, "{c}: name");
            assert_eq!(
                got.parent_head,
                want.parent.map(|p| m.heads[p].id.clone()),
                "{c}: parent"
            );
            assert_eq!(got.retired, want.retired, "{c}: retired");
            assert_eq!(got.selected, i == m.selected, "{c}: selected");
            assert_eq!(got.message_count, want.path.len(), "{c}: message_count");
            assert_eq!(got.turns, m.visible_turns(i), "{c}: turns");
            let projected: Vec<(MessageId, String, Role, MessageKind)> = s
                .project(&want.id)
                .unwrap()
                .into_iter()
                .map(|x| (x.id.clone(), x.content.clone(), x.role, x.kind))
                .collect();
            let expected: Vec<(MessageId, String, Role, MessageKind)> = want
                .path
                .iter()
                .map(|&x| {
                    let x = &m.msgs[x];
                    (x.id.clone(), x.content.clone(), x.role, x.kind)
                })
                .collect();
            assert_eq!(projected, expected, "{c}: projection");
            for (t, (number, msg)) in s.turns_on(&want.id).unwrap().iter().zip(&m.turns) {
                assert_eq!(t.info.turn, *number, "{c}: turn number");
                let boundary = m
                    .pos(i, *msg)
                    .map(|p| (p, p.checked_sub(1).map(|q| m.msgs[want.path[q]].id.clone())));
                let got = t.boundary.as_ref().map(|b| (b.index, b.before.clone()));
                assert_eq!(got, boundary, "{c}: boundary of turn {number}");
            }
        }
        let turns: Vec<(u64, MessageId)> = s.turns().into_iter().map(|t| (t.turn, t.message_id)).collect();
        let want: Vec<(u64, MessageId)> = m.turns.iter().map(|(n, x)| (*n, m.msgs[*x].id.clone())).collect();
        assert_eq!(turns, want, "{ctx}: turns");
        assert_eq!(
            s.next_turn(),
            m.turns.last().map_or(0, |(n, _)| n + 1),
            "{ctx}: next turn"
        );
    }
}

proptest! {
    // Failures saved in `property.proptest-regressions` beside this file (the default would look
    // for a crate root above it, find `main.rs`, and save them in `tests/proptest-regressions/`).
    #![proptest_config(ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn session_matches_the_tree_model(ops in prop::collection::vec(op(), 1..40)) {
        let mut h = Harness::new();
        for (i, op) in ops.iter().enumerate() {
            h.step(op);
            h.check(&format!("after step {i} {op:?}"));
        }
        // Finally, a fresh reader of the file agrees too.
        let id = h.id();
        drop(h.session.take());
        let reader = h.opts.open_reader(&h.dir, &id).unwrap();
        h.check_against(&reader, "final reopen");
    }
}

//! Format-1 flat logs: read as one head; any write makes a new format-2 session and leaves the old
//! file byte-identical.

use std::path::PathBuf;

use retrace_session::{
    ForkSpec, HeadId, HeadKind, NewMessage, Role, SessionError, SessionId, SummaryMode, SummarySpec,
    TurnStart,
};

use crate::common::{contents, lines, Env};

const OLD: &str = concat!(
    r#"{"role":"system","content":"be brief"}"#,
    "\n",
    r#"{"role":"user","content":"make a.txt"}"#,
    "\n",
    r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"a.txt\",\"content\":\"hi\"}"}}]}"#,
    "\n",
    r#"{"role":"tool","content":"ok","tool_call_id":"c1"}"#,
    "\n",
    r#"{"role":"assistant","content":"done"}"#,
    "\n",
    r#"{"role":"user","content":"now b.txt"}"#,
    "\n",
    r#"{"role":"assistant","content":"done too"}"#,
    "\n",
);

fn old_log(env: &Env) -> (SessionId, PathBuf) {
    std::fs::create_dir_all(&env.dir).unwrap();
    let id = SessionId::new("old-session");
    let path = env.dir.join("old-session.jsonl");
    std::fs::write(&path, OLD).unwrap();
    (id, path)
}

fn with_workspace(env: &mut Env) {
    env.opts.legacy_workspace = Some(env.workspace.clone());
}

#[test]
fn a_format1_log_reads_as_one_head_with_a_turn_per_user_message() {
    let env = Env::new();
    let (id, _) = old_log(&env);
    let s = env.reader(&id);
    assert_eq!(s.format(), 1);
    assert_eq!(s.header(), None);
    assert_eq!(s.heads().len(), 1);
    let main = HeadId::main();
    assert_eq!(s.selected(), &main);
    let msgs = s.project(&main).unwrap();
    assert_eq!(msgs.len(), 7);
    assert_eq!(msgs[2].tool_calls[0].name, "write_file");
    assert_eq!(msgs[2].content, "");
    let turns = s.turns();
    assert_eq!(turns.iter().map(|t| t.turn).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(turns[1].message_id.as_str(), "f1-6");
    assert_eq!(s.boundary(&main, 0).unwrap().index, 1);
    assert_eq!(s.boundary(&main, 1).unwrap().index, 5);
    assert_eq!(s.next_turn(), 2);
}

#[test]
fn a_fork_of_a_format1_log_makes_a_new_session_and_leaves_the_original_byte_identical() {
    let mut env = Env::new();
    with_workspace(&mut env);
    let (old_id, old_path) = old_log(&env);
    let before = std::fs::read(&old_path).unwrap();
    let mtime = std::fs::metadata(&old_path).unwrap().modified().unwrap();

    let mut s = env.writer(&old_id);
    let main = HeadId::main();
    // Rewind to turn 1: the new session keeps the messages before its boundary.
    let b = s.boundary(&main, 1).unwrap();
    let rewind = ForkSpec {
        kind: HeadKind::Rewind,
        name: Some("retry".into()),
        select: true,
    };
    let forked = s.fork(&main, b.before.as_ref(), rewind).unwrap();
    assert_eq!(forked.migrated_from.as_ref(), Some(&old_id));
    assert_ne!(forked.session_id, old_id);
    assert_eq!(&forked.session_id, s.id());
    assert_eq!(s.migrated_from(), Some(&old_id));
    assert_eq!(forked.head, main);
    assert_eq!(s.format(), 2);
    let from = s.forked_from().unwrap();
    assert_eq!((&from.session_id, from.format, from.messages), (&old_id, 1, 5));
    assert_eq!(contents(&s, &main), ["be brief", "make a.txt", "", "ok", "done"]);
    assert_eq!(s.head(&main).unwrap().name.as_deref(), Some("retry"));
    assert_eq!(s.turns().iter().map(|t| t.turn).collect::<Vec<_>>(), [0]);
    let msgs = s.project(&main).unwrap();
    assert_eq!(
        msgs[2].tool_calls[0].arguments,
        r#"{"path":"a.txt","content":"hi"}"#
    );
    assert_eq!(msgs[3].tool_call_id.as_deref(), Some("c1"));

    // The new session is a normal writer; the old file is untouched and its lease free again.
    crate::common::exchange(&mut s, &main, "b.txt, differently", "ok");
    assert_eq!(s.next_turn(), 2);
    let new_id = s.id().clone();
    assert_eq!(std::fs::read(&old_path).unwrap(), before);
    assert_eq!(std::fs::metadata(&old_path).unwrap().modified().unwrap(), mtime);
    assert!(env.opts.open_writer(&env.dir, &old_id).is_ok());
    drop(s);
    let r = env.reader(&new_id);
    assert_eq!(r.format(), 2);
    assert_eq!(contents(&r, &main).len(), 7);
    assert!(lines(&env.log(&new_id))[0]
        .contains(r#""forked_from":{"session_id":"old-session","format":1,"messages":5}"#));
    assert_eq!(std::fs::read(&old_path).unwrap(), before);
}

#[test]
fn a_turn_on_a_format1_log_keeps_every_message_and_continues_the_numbering() {
    let mut env = Env::new();
    with_workspace(&mut env);
    let (old_id, old_path) = old_log(&env);
    let before = std::fs::read(&old_path).unwrap();
    let mut s = env.writer(&old_id);
    let main = HeadId::main();
    // A write that is refused makes no new session.
    let err = s
        .append(&HeadId::new("h-nope"), NewMessage::new(Role::User, "x"))
        .unwrap_err();
    assert!(matches!(err, SessionError::UnknownHead(_)), "{err}");
    assert_eq!(s.format(), 1);
    assert_eq!(
        std::fs::read_dir(&env.dir).unwrap().count(),
        2,
        "the log and its lease"
    );
    let turn = s.next_turn();
    let started = s
        .start_turn(TurnStart {
            turn,
            head: main.clone(),
            message_id: None,
            content: "and c.txt".into(),
        })
        .unwrap();
    assert_eq!(started.turn, 2);
    assert_eq!(started.migrated_from.as_ref(), Some(&old_id));
    assert_eq!(started.boundary.index, 7);
    assert_eq!(started.session_id, *s.id());
    assert_eq!(s.project(&main).unwrap().len(), 8);
    assert_eq!(s.turns().iter().map(|t| t.turn).collect::<Vec<_>>(), [0, 1, 2]);
    // Later writes go to the new session and report no migration.
    let a = s.append(&main, NewMessage::new(Role::Assistant, "done")).unwrap();
    assert_eq!(a.migrated_from, None);
    assert_eq!(std::fs::read(&old_path).unwrap(), before);
}

#[test]
fn a_summary_of_a_format1_log_is_made_in_the_new_session() {
    let mut env = Env::new();
    with_workspace(&mut env);
    let (old_id, old_path) = old_log(&env);
    let before = std::fs::read(&old_path).unwrap();
    let mut s = env.writer(&old_id);
    let main = HeadId::main();
    let made = s
        .summarize(SummarySpec {
            compaction: false,
            usage: None,
            head: main.clone(),
            turn: 1,
            mode: SummaryMode::UpTo,
            content: "made a.txt".into(),
            name: None,
            select: true,
        })
        .unwrap();
    assert_eq!(made.migrated_from.as_ref(), Some(&old_id));
    assert_eq!(contents(&s, &made.head), ["made a.txt", "now b.txt", "done too"]);
    assert_eq!(contents(&s, &main).len(), 7);
    assert_eq!(std::fs::read(&old_path).unwrap(), before);
}

#[test]
fn format1_writes_need_a_workspace_and_a_writer() {
    let env = Env::new();
    let (old_id, old_path) = old_log(&env);
    let before = std::fs::read(&old_path).unwrap();
    let main = HeadId::main();

    let mut r = env.reader(&old_id);
    assert!(matches!(r.upgrade(), Err(SessionError::ReadOnly(_))));

    let mut w = env.writer(&old_id);
    let err = w.append(&main, NewMessage::new(Role::User, "x")).unwrap_err();
    assert!(matches!(err, SessionError::WorkspaceUnknown(_)), "{err}");
    // Selecting main needs no write; retiring it is refused as for any selected head.
    w.select(&main).unwrap();
    assert!(matches!(w.retire(&main), Err(SessionError::RetireSelected(_))));
    w.end_turn().unwrap();
    assert_eq!(w.format(), 1);

    let names: Vec<_> = std::fs::read_dir(&env.dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    assert_eq!(names, ["old-session.jsonl"], "no new session was made");
    assert_eq!(std::fs::read(&old_path).unwrap(), before);

    // A torn tail of a format-1 log is ignored, never cut.
    let mut torn = before.clone();
    torn.extend_from_slice(br#"{"role":"user","con"#);
    std::fs::write(&old_path, &torn).unwrap();
    drop(w);
    let w = env.writer(&old_id);
    assert_eq!(w.project(&main).unwrap().len(), 7);
    assert_eq!(w.warnings().len(), 1);
    assert_eq!(std::fs::read(&old_path).unwrap(), torn);
}

/// The sidecar records where turn 1 starts (`msgIndex` 5: after "be brief", "make a.txt" and the
/// tool exchange), and the old version's follow-up "and quickly" opened no turn.
const WITH_FOLLOW_UP: &str = concat!(
    r#"{"role":"system","content":"be brief"}"#,
    "\n",
    r#"{"role":"user","content":"make a.txt"}"#,
    "\n",
    r#"{"role":"user","content":"and quickly"}"#,
    "\n",
    r#"{"role":"assistant","content":"done"}"#,
    "\n",
    r#"{"role":"assistant","content":"anything else?"}"#,
    "\n",
    r#"{"role":"user","content":"now b.txt"}"#,
    "\n",
    r#"{"role":"assistant","content":"done too"}"#,
    "\n",
    r#"{"role":"user","content":"and c.txt"}"#,
    "\n",
);

#[test]
fn recorded_turn_starts_place_the_turns_and_the_new_session_keeps_them() {
    let mut env = Env::new();
    with_workspace(&mut env);
    std::fs::create_dir_all(&env.dir).unwrap();
    let old_id = SessionId::new("old-session");
    std::fs::write(env.dir.join("old-session.jsonl"), WITH_FOLLOW_UP).unwrap();
    let main = HeadId::main();

    let mut s = env.writer(&old_id);
    // Counted: "make a.txt", "and quickly", "now b.txt", "and c.txt".
    assert_eq!(s.boundary(&main, 1).unwrap().index, 2);
    s.anchor_format1_turns(&[(0, 1), (1, 5)].into_iter().collect())
        .unwrap();
    let turns: Vec<_> = s
        .turns()
        .iter()
        .map(|t| (t.turn, t.message_id.as_str().to_string()))
        .collect();
    // Turn 2 was never recorded: the first user message after turn 1's.
    assert_eq!(
        turns,
        [
            (0, "f1-2".to_string()),
            (1, "f1-6".to_string()),
            (2, "f1-8".to_string())
        ]
    );
    assert_eq!(s.boundary(&main, 1).unwrap().index, 5);
    assert_eq!(s.next_turn(), 3);
    assert_eq!(s.project(&main).unwrap()[2].turn, None, "a follow-up, not a turn");

    // A rewind to turn 1 keeps the five messages before it, and the new session its turn 0.
    let b = s.boundary(&main, 1).unwrap();
    let spec = ForkSpec {
        kind: HeadKind::Rewind,
        name: None,
        select: true,
    };
    s.fork(&main, b.before.as_ref(), spec).unwrap();
    assert_eq!(
        contents(&s, &main),
        ["be brief", "make a.txt", "and quickly", "done", "anything else?"]
    );
    assert_eq!(s.turns().iter().map(|t| t.turn).collect::<Vec<_>>(), [0]);
    // Anchoring a format-2 session changes nothing.
    s.anchor_format1_turns(&[(0, 2)].into_iter().collect()).unwrap();
    assert_eq!(s.boundary(&main, 0).unwrap().index, 1);
}

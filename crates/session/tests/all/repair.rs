//! A log with a line that cannot be read: opened tolerantly it holds what came before and takes no
//! write; the repair moves every line it cannot replay aside, byte for byte, and the log is whole
//! again.

use retrace_session::{HeadId, NewMessage, Role, SessionError};

use crate::common::{contents, exchange, lines, Env};

/// Lines: 1 header, 2 fork main, 3 u0, 4 turn 0, 5 a0, 6 u1, 7 turn 1, 8 a1, 9 u2, 10 turn 2, 11 a2.
fn three_turns(env: &Env) -> (retrace_session::SessionId, std::path::PathBuf, Vec<String>) {
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    exchange(&mut s, &main, "u1", "a1");
    exchange(&mut s, &main, "u2", "a2");
    let (id, path) = (s.id().clone(), s.log_path().to_path_buf());
    drop(s);
    let original = lines(&path);
    assert_eq!(original.len(), 11);
    (id, path, original)
}

fn rewrite(path: &std::path::Path, lines: &[String]) {
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
}

#[test]
fn a_damaged_log_opens_tolerantly_and_takes_no_write() {
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad[5] = "{\"type\":\"message\",\"id\":".to_string();
    rewrite(&path, &bad);
    let before = std::fs::read(&path).unwrap();

    // Strict opening still refuses, naming the line.
    let err = env.opts.open_writer(&env.dir, &id).unwrap_err();
    assert!(matches!(err, SessionError::Corrupt { line: 6, .. }), "{err}");

    let main = HeadId::main();
    let r = env.opts.open_reader_tolerant(&env.dir, &id).unwrap();
    let d = r.damage().unwrap();
    assert_eq!((d.line, d.path.as_path()), (6, path.as_path()));
    assert_eq!(contents(&r, &main), ["u0", "a0"]);
    drop(r);
    let mut w = env.opts.open_writer_tolerant(&env.dir, &id).unwrap();
    assert!(w.is_writer());
    let err = w.append(&main, NewMessage::new(Role::User, "x")).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, SessionError::Damaged { .. }), "{text}");
    assert!(
        text.contains(&path.display().to_string()) && text.contains("line 6"),
        "{text}"
    );
    assert!(w.note(&main, "n").is_err());
    assert!(w.end_turn().is_err());
    // It holds the lease all the same.
    assert!(matches!(
        env.opts.open_writer_tolerant(&env.dir, &id).unwrap_err(),
        SessionError::Held { .. }
    ));
    drop(w);
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing was written");

    // A bad line before the first head: a `main` is made up in memory, never written.
    let mut bad = original.clone();
    bad[1] = "{oops".to_string();
    rewrite(&path, &bad);
    let r = env.opts.open_reader_tolerant(&env.dir, &id).unwrap();
    assert_eq!(r.damage().unwrap().line, 2);
    assert!(contents(&r, &main).is_empty());
}

#[test]
fn the_repair_moves_the_bad_line_and_what_depends_on_it_aside() {
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad[5] = "{\"type\":\"message\",\"id\":".to_string();
    // And a torn last line.
    let mut bytes = (bad.join("\n") + "\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"mess");
    std::fs::write(&path, &bytes).unwrap();

    let r = env.opts.repair(&env.dir, &id).unwrap();
    let moved: Vec<usize> = r.moved.iter().map(|m| m.line).collect();
    // u1 does not parse; turn 1 names it; the torn tail. a1, whose parent u1 was, stays after a
    // note standing for u1, and so does everything after it.
    assert_eq!(moved, [6, 7, 12], "{:?}", r.moved);
    assert!(r.moved[0].reason.starts_with("cannot be read"), "{:?}", r.moved);
    assert!(r.moved[1].reason.contains("unknown message"), "{:?}", r.moved);
    assert_eq!((r.lines_kept, r.placeholders), (9, 1));
    let to = r.moved_to.clone().unwrap();
    assert_eq!(to, env.dir.join(format!("{id}.damaged-1")));
    // Byte for byte: the moved lines are the damaged log's lines, none lost.
    let mut want = (bad[5..7].join("\n") + "\n").into_bytes();
    want.extend_from_slice(b"{\"type\":\"mess");
    assert_eq!(std::fs::read(&to).unwrap(), want);
    let now = lines(&path);
    assert_eq!(now[..5], original[..5]);
    assert!(now[5].starts_with(r#"{"type":"note","#), "{}", now[5]);
    assert_eq!(now[6..], original[7..]);

    // Usable again: strict opening, writing.
    let main = HeadId::main();
    let mut s = env.writer(&id);
    assert_eq!(
        contents(&s, &main),
        ["u0", "a0", retrace_session::PLACEHOLDER_TEXT, "a1", "u2", "a2"]
    );
    assert_eq!(s.turns().len(), 2, "turn 1 is gone with its message");
    s.append(&main, NewMessage::new(Role::User, "again")).unwrap();
    s.end_turn().unwrap();
    drop(s);
    // A sound log is left as it is.
    let before = std::fs::read(&path).unwrap();
    let again = env.opts.repair(&env.dir, &id).unwrap();
    assert!(again.moved.is_empty() && again.moved_to.is_none());
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn a_second_writers_interleaved_lines_go_aside_and_the_first_stays_whole() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    let (id, path) = (s.id().clone(), s.log_path().to_path_buf());
    drop(s);
    let base = lines(&path);
    // Writer A's turn, then writer B's, each from the same starting log.
    let mut a = env.writer(&id);
    exchange(&mut a, &main, "uA", "aA");
    drop(a);
    let a_lines = lines(&path)[base.len()..].to_vec();
    rewrite(&path, &base);
    let mut b = env.writer(&id);
    exchange(&mut b, &main, "uB", "aB");
    drop(b);
    let b_lines = lines(&path)[base.len()..].to_vec();
    // As two appenders interleave them: A's user message and turn, B's, A's answer, B's.
    let mut mixed = base.clone();
    mixed.extend([a_lines[0].clone(), a_lines[1].clone()]);
    mixed.extend([b_lines[0].clone(), b_lines[1].clone()]);
    mixed.push(a_lines[2].clone());
    mixed.push(b_lines[2].clone());
    rewrite(&path, &mixed);
    assert!(env.opts.open_reader(&env.dir, &id).is_err());

    let r = env.opts.repair(&env.dir, &id).unwrap();
    let n = base.len();
    let moved: Vec<usize> = r.moved.iter().map(|m| m.line).collect();
    assert_eq!(moved, [n + 3, n + 4, n + 6], "{:?}", r.moved);
    assert_eq!(
        std::fs::read_to_string(r.moved_to.unwrap()).unwrap(),
        b_lines.join("\n") + "\n"
    );
    let s = env.writer(&id);
    assert_eq!(contents(&s, &main), ["u0", "a0", "uA", "aA"]);
}

#[test]
fn a_log_whose_header_cannot_be_read_is_not_repaired() {
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad[0] = "{\"type\":\"session\",".to_string();
    rewrite(&path, &bad);
    let before = std::fs::read(&path).unwrap();
    let err = env.opts.repair(&env.dir, &id).unwrap_err();
    assert!(matches!(err, SessionError::Unrepairable { .. }), "{err}");
    assert!(err.to_string().contains("nothing was changed"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(!env.dir.join(format!("{id}.damaged-1")).exists());
}

/// Lines: 1 header, 2 main, 3 u0, 4 turn 0, 5 a0, 6 u1, 7 turn 1, 8 call (c1, c2), 9 result c1,
/// 10 result c2, 11 a1, 12 u2, 13 turn 2, 14 a2.
pub(crate) fn with_calls(env: &Env) -> (retrace_session::SessionId, std::path::PathBuf) {
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    crate::common::turn(&mut s, &main, "u1");
    let call = |id: &str| retrace_session::ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments: "{}".into(),
    };
    s.append(
        &main,
        NewMessage {
            tool_calls: vec![call("c1"), call("c2")],
            ..NewMessage::new(Role::Assistant, "")
        },
    )
    .unwrap();
    for c in ["c1", "c2"] {
        s.append(
            &main,
            NewMessage {
                tool_call_id: Some(c.into()),
                ..NewMessage::new(Role::Tool, format!("result {c}"))
            },
        )
        .unwrap();
    }
    crate::common::say(&mut s, &main, "a1");
    s.end_turn().unwrap();
    exchange(&mut s, &main, "u2", "a2");
    let (id, path) = (s.id().clone(), s.log_path().to_path_buf());
    drop(s);
    (id, path)
}

/// No tool result answers a call not made just before it (a model server refuses that history).
fn assert_no_orphan_result(s: &retrace_session::Session, head: &HeadId) {
    let mut open: Vec<String> = Vec::new();
    for m in s.project(head).unwrap() {
        match m.role {
            Role::Tool => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                assert!(open.contains(&id), "orphan result {id}");
                open.retain(|c| *c != id);
            }
            Role::Assistant => open = m.tool_calls.iter().map(|c| c.id.clone()).collect(),
            _ => open.clear(),
        }
    }
}

#[test]
fn a_lost_call_leaves_notes_and_the_rest_of_the_conversation_stays() {
    let main = HeadId::main();
    for damage in ["#", "{\"type\":\"message\",\"id\":\"x\",\"content\":\"\u{1}"] {
        let env = Env::new();
        let (id, path) = with_calls(&env);
        let mut bad = lines(&path);
        bad[7] = damage.to_string();
        rewrite(&path, &bad);
        let r = env.opts.repair(&env.dir, &id).unwrap();
        let moved: Vec<usize> = r.moved.iter().map(|m| m.line).collect();
        // The call and its two results move (verbatim); notes stand in their places.
        assert_eq!(moved, [8, 9, 10], "{:?}", r.moved);
        assert_eq!(r.placeholders, 3);
        let aside = std::fs::read_to_string(r.moved_to.unwrap()).unwrap();
        assert_eq!(aside, bad[7..10].join("\n") + "\n");
        let mut w = env.writer(&id);
        assert_eq!(
            contents(&w, &main),
            [
                "u0",
                "a0",
                "u1",
                retrace_session::PLACEHOLDER_TEXT,
                retrace_session::TOOL_PLACEHOLDER_TEXT,
                retrace_session::TOOL_PLACEHOLDER_TEXT,
                "a1",
                "u2",
                "a2"
            ]
        );
        assert_no_orphan_result(&w, &main);
        exchange(&mut w, &main, "u3", "a3");
    }
}

#[test]
fn a_lost_result_or_answer_and_a_parent_that_names_nothing_keep_what_follows() {
    let main = HeadId::main();
    // Line 9 (result c1) lost; line 11 (a1) lost; line 14 (a2) names a parent nothing defines.
    for (line, expect_moved) in [(9usize, vec![9usize, 10]), (11, vec![11]), (14, vec![])] {
        let env = Env::new();
        let (id, path) = with_calls(&env);
        let mut bad = lines(&path);
        if line == 14 {
            let v: serde_json::Value = serde_json::from_str(&bad[13]).unwrap();
            let mut v = v;
            v["parent"] = "nope".into();
            bad[13] = v.to_string();
        } else {
            bad[line - 1] = "\u{1}".to_string();
        }
        rewrite(&path, &bad);
        let r = env.opts.repair(&env.dir, &id).unwrap();
        let moved: Vec<usize> = r.moved.iter().map(|m| m.line).collect();
        assert_eq!(moved, expect_moved, "line {line}: {:?}", r.moved);
        let mut w = env.writer(&id);
        let c = contents(&w, &main);
        assert_eq!(c.last().map(String::as_str), Some("a2"), "line {line}: {c:?}");
        assert!(c.contains(&"u2".to_string()), "{c:?}");
        assert_no_orphan_result(&w, &main);
        exchange(&mut w, &main, "u3", "a3");
    }
}

#[test]
fn an_out_of_order_turn_number_is_the_line_that_moves() {
    let main = HeadId::main();
    // Lines: 4 turn 0, 7 turn 1, 10 turn 2.
    for bad_turn in ["7", "18446744073709551615", "0"] {
        let env = Env::new();
        let (id, path, original) = three_turns(&env);
        let mut bad = original.clone();
        bad[6] = bad[6].replace("\"turn\":1", &format!("\"turn\":{bad_turn}"));
        assert_ne!(bad[6], original[6]);
        rewrite(&path, &bad);
        let err = env.opts.open_writer(&env.dir, &id).unwrap_err();
        assert!(matches!(err, SessionError::Corrupt { .. }), "{err}");
        let r = env.opts.repair(&env.dir, &id).unwrap();
        let moved: Vec<usize> = r.moved.iter().map(|m| m.line).collect();
        assert_eq!(moved, [7], "{bad_turn}: {:?}", r.moved);
        let mut w = env.writer(&id);
        assert_eq!(w.next_turn(), 3);
        exchange(&mut w, &main, "u3", "a3");
    }
    // A last turn number lowered (2 -> 0): that line moves, not turn 1 before it.
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad[9] = bad[9].replace("\"turn\":2", "\"turn\":0");
    rewrite(&path, &bad);
    let r = env.opts.repair(&env.dir, &id).unwrap();
    assert_eq!(r.moved.iter().map(|m| m.line).collect::<Vec<_>>(), [10]);
    exchange(&mut env.writer(&id), &main, "u3", "a3");
    // The largest number as the last turn: refused naming the line, never a panic; the repair
    // moves it and a turn runs.
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad[9] = bad[9].replace("\"turn\":2", "\"turn\":18446744073709551615");
    rewrite(&path, &bad);
    let err = env.opts.open_writer(&env.dir, &id).unwrap_err();
    assert!(matches!(err, SessionError::Corrupt { line: 10, .. }), "{err}");
    let r = env.opts.repair(&env.dir, &id).unwrap();
    assert_eq!(r.moved.iter().map(|m| m.line).collect::<Vec<_>>(), [10]);
    exchange(&mut env.writer(&id), &main, "u3", "a3");
}

#[test]
fn a_lost_main_fork_line_is_written_again() {
    let main = HeadId::main();
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad[1] = "{oops".to_string();
    rewrite(&path, &bad);
    let r = env.opts.repair(&env.dir, &id).unwrap();
    assert_eq!(r.moved.iter().map(|m| m.line).collect::<Vec<_>>(), [2]);
    let mut w = env.writer(&id);
    assert_eq!(contents(&w, &main), ["u0", "a0", "u1", "a1", "u2", "a2"]);
    exchange(&mut w, &main, "u3", "a3");
}

#[test]
fn retiring_the_selected_head_is_damage_the_repair_moves() {
    let main = HeadId::main();
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let mut bad = original.clone();
    bad.insert(
        8,
        "{\"type\":\"retire\",\"head\":\"main\",\"at\":\"2026-01-01T00:00:00Z\"}".to_string(),
    );
    rewrite(&path, &bad);
    let err = env.opts.open_writer(&env.dir, &id).unwrap_err();
    assert!(matches!(err, SessionError::Corrupt { line: 9, .. }), "{err}");
    let r = env.opts.repair(&env.dir, &id).unwrap();
    assert_eq!(r.moved.iter().map(|m| m.line).collect::<Vec<_>>(), [9]);
    exchange(&mut env.writer(&id), &main, "u3", "a3");
}

#[test]
fn taken_damaged_names_are_skipped_and_links_never_followed() {
    let env = Env::new();
    let (id, path, original) = three_turns(&env);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret");
    std::fs::write(&target, "outside\n").unwrap();
    std::os::unix::fs::symlink(&target, env.dir.join(format!("{id}.damaged-1"))).unwrap();
    std::fs::create_dir(env.dir.join(format!("{id}.damaged-2"))).unwrap();
    let mut bad = original.clone();
    bad[5] = "#".to_string();
    rewrite(&path, &bad);
    let r = env.opts.repair(&env.dir, &id).unwrap();
    assert_eq!(r.moved_to.unwrap(), env.dir.join(format!("{id}.damaged-3")));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "outside\n");
    assert!(std::fs::symlink_metadata(env.dir.join(format!("{id}.damaged-1")))
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn a_lost_call_moves_its_result_and_the_answer_after_stays() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    crate::common::turn(&mut s, &main, "u1");
    let call = retrace_session::ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: "{}".into(),
    };
    s.append(
        &main,
        NewMessage {
            tool_calls: vec![call],
            ..NewMessage::new(Role::Assistant, "")
        },
    )
    .unwrap();
    s.append(
        &main,
        NewMessage {
            tool_call_id: Some("c1".into()),
            ..NewMessage::new(Role::Tool, "result")
        },
    )
    .unwrap();
    crate::common::say(&mut s, &main, "a1");
    s.end_turn().unwrap();
    let (id, path) = (s.id().clone(), s.log_path().to_path_buf());
    drop(s);
    // Lines: 1 header, 2 main, 3 u0, 4 turn 0, 5 a0, 6 u1, 7 turn 1, 8 call, 9 result, 10 a1.
    let mut bad = lines(&path);
    bad[7] = "#".to_string();
    rewrite(&path, &bad);

    // A note cannot stand for a call: its result would answer nothing, which a model server
    // refuses. The result moves too, a note in its place, and the answer after it stays.
    let r = env.opts.repair(&env.dir, &id).unwrap();
    let moved: Vec<usize> = r.moved.iter().map(|m| m.line).collect();
    assert_eq!(moved, [8, 9], "{:?}", r.moved);
    assert_eq!(r.placeholders, 2);
    assert_eq!(
        contents(&env.writer(&id), &main),
        [
            "u0",
            "a0",
            "u1",
            retrace_session::PLACEHOLDER_TEXT,
            retrace_session::TOOL_PLACEHOLDER_TEXT,
            "a1"
        ]
    );
}

//! The file: reopening, torn tails, corrupt lines, other formats, listing by header.

use std::io::Write;

use retrace_session::{list_sessions, ForkSpec, HeadId, SessionError, SessionId};

use crate::common::{contents, exchange, lines, Env};

#[test]
fn reopening_lands_on_the_head_selected_last() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    let t0 = exchange(&mut s, &main, "u0", "a0");
    let a = s
        .fork(&main, Some(&t0.message_id), ForkSpec::default())
        .unwrap()
        .head;
    let b = s.fork(&main, None, ForkSpec::default()).unwrap().head;
    let id = s.id().clone();
    assert_eq!(env.reader(&id).selected(), &main, "forking does not select");
    for (pick, _) in [(&a, 1), (&b, 2), (&a, 3)] {
        s.select(pick).unwrap();
    }
    drop(s);
    assert_eq!(env.reader(&id).selected(), &a);
    let mut w = env.writer(&id);
    assert_eq!(w.selected(), &a);
    w.select(&main).unwrap();
    drop(w);
    assert_eq!(env.reader(&id).selected(), &main);
    assert_eq!(env.writer(&id).selected(), &main);
}

#[test]
fn a_torn_tail_is_ignored_by_readers_and_cut_by_the_next_writer() {
    let env = Env::new();
    let main = HeadId::main();
    let torn = br#"{"type":"message","id":"00000000-0000-0000-0000-0000000000ff","parent":"#;
    let id = torn_log(&env, torn);
    let path = env.log(&id);
    let mut whole = std::fs::read(&path).unwrap();
    whole.truncate(whole.len() - torn.len());
    let torn_file = env.dir.join(format!("{id}.torn-1"));

    // A reader ignores it, warns, and changes nothing.
    let r = env.reader(&id);
    assert_eq!(contents(&r, &main), ["u0", "a0"]);
    let w = env.take_warnings();
    assert_eq!(w.len(), 1);
    assert!(
        w[0].contains("torn last line") && w[0].contains(&format!("{} bytes", torn.len())),
        "{w:?}"
    );
    assert_eq!(r.warnings(), w.as_slice());
    assert!(!torn_file.exists());
    assert_eq!(std::fs::read(&path).unwrap().len(), whole.len() + torn.len());

    // The next writer keeps the bytes aside and cuts them off before appending.
    let mut s = env.writer(&id);
    let w = env.take_warnings();
    assert!(w[0].contains("cut off") && w[0].contains(".torn-1"), "{w:?}");
    assert_eq!(std::fs::read(&torn_file).unwrap(), torn);
    assert_eq!(std::fs::read(&path).unwrap(), whole);
    exchange(&mut s, &main, "u1", "a1");
    drop(s);
    let r = env.reader(&id);
    assert!(r.warnings().is_empty());
    assert_eq!(contents(&r, &main), ["u0", "a0", "u1", "a1"]);

    // A second, different tear goes to torn-2; torn-1 is kept.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"type\":\"sel")
        .unwrap();
    drop(env.writer(&id));
    assert_eq!(
        std::fs::read(env.dir.join(format!("{id}.torn-2"))).unwrap(),
        b"{\"type\":\"sel"
    );
    assert_eq!(std::fs::read(&torn_file).unwrap(), torn);
}

#[test]
fn a_corrupt_middle_line_is_named_by_its_number() {
    let env = Env::new();
    let mut s = env.create();
    let main = HeadId::main();
    exchange(&mut s, &main, "u0", "a0");
    exchange(&mut s, &main, "u1", "a1");
    let id = s.id().clone();
    let path = s.log_path().to_path_buf();
    drop(s);
    let original = lines(&path);
    let rewrite = |lines: &[String]| std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    // Lines: 1 header, 2 fork main, 3 u0, 4 turn 0, 5 a0, 6 u1, 7 turn 1, 8 a1.
    // Make line 4 unparseable.
    let mut bad = original.clone();
    bad[3] = "{\"type\":\"message\",\"id\":".to_string();
    rewrite(&bad);
    for err in [
        env.opts.open_reader(&env.dir, &id).unwrap_err(),
        env.opts.open_writer(&env.dir, &id).unwrap_err(),
    ] {
        assert!(matches!(err, SessionError::Corrupt { line: 4, .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains(&path.display().to_string()) && text.contains("line 4"),
            "{text}"
        );
    }

    // A well-formed line whose parent is wrong is named too.
    let mut bad = original.clone();
    bad[7] = bad[7].replace(r#""parent":""#, r#""parent":"x"#);
    assert_ne!(bad[7], original[7]);
    rewrite(&bad);
    let err = env.opts.open_reader(&env.dir, &id).unwrap_err();
    assert!(matches!(err, SessionError::Corrupt { line: 8, .. }), "{err}");

    // An unknown entry type, an empty line, and a bad *complete* last line are errors, not tears.
    for (at, text) in [
        (4, r#"{"type":"teleport","at":"x"}"#),
        (4, ""),
        (original.len() - 1, "{oops"),
    ] {
        let mut bad = original.clone();
        bad[at] = text.to_string();
        rewrite(&bad);
        let err = env.opts.open_reader(&env.dir, &id).unwrap_err();
        assert!(
            matches!(err, SessionError::Corrupt { line, .. } if line == at + 1),
            "{text:?}: {err}"
        );
    }

    rewrite(&original);
    assert_eq!(contents(&env.reader(&id), &main), ["u0", "a0", "u1", "a1"]);
}

#[test]
fn logs_of_other_formats_are_refused_by_name() {
    let env = Env::new();
    std::fs::create_dir_all(&env.dir).unwrap();
    for (name, text) in [
        ("v3", "{\"type\":\"session\",\"id\":\"v3\",\"format\":3}\n"),
        ("csv", "role,content\nuser,hi\n"),
        ("other", "{\"kind\":\"something\"}\n"),
        ("empty", ""),
    ] {
        std::fs::write(env.dir.join(format!("{name}.jsonl")), text).unwrap();
        let err = env.opts.open_reader(&env.dir, &SessionId::new(name)).unwrap_err();
        assert!(
            matches!(err, SessionError::UnsupportedFormat { .. }),
            "{name}: {err}"
        );
        assert!(err.to_string().contains(&format!("{name}.jsonl")), "{err}");
    }
    let err = env.opts.open_reader(&env.dir, &SessionId::new("v3")).unwrap_err();
    assert!(err.to_string().contains("format 3"), "{err}");
    let err = env
        .opts
        .open_reader(&env.dir, &SessionId::new("missing"))
        .unwrap_err();
    assert!(matches!(err, SessionError::NoSuchSession { .. }), "{err}");
    let err = env
        .opts
        .open_writer(&env.dir, &SessionId::new("../x"))
        .unwrap_err();
    assert!(matches!(err, SessionError::InvalidSessionId(_)), "{err}");
    assert!(
        !env.dir.join("missing.lease").exists(),
        "no lease for a missing session"
    );
}

#[test]
fn listing_reads_headers_only_and_filters_by_workspace() {
    let env = Env::new();
    let other_ws = env.tmp.path().join("other");
    std::fs::create_dir_all(&other_ws).unwrap();
    let a = env.create();
    let b = env.create();
    let c = env.opts.create(&env.dir, &other_ws).unwrap();
    let (a, b, c) = (a.id().clone(), b.id().clone(), c.id().clone());
    // Everything after the header of b is garbage: listing never reads it.
    let b_log = env.log(&b);
    let header = lines(&b_log).remove(0);
    std::fs::write(&b_log, format!("{header}\nnot json at all\n")).unwrap();
    std::fs::write(
        env.dir.join("legacy.jsonl"),
        "{\"role\":\"user\",\"content\":\"hi\"}\n",
    )
    .unwrap();
    std::fs::write(env.dir.join("junk.jsonl"), "hello\n").unwrap();
    std::fs::write(env.dir.join("notes.txt"), "ignored\n").unwrap();

    let mine = list_sessions(&env.dir, Some(&env.workspace)).unwrap();
    let ids: Vec<_> = mine.sessions.iter().map(|s| s.id.clone()).collect();
    assert_eq!(ids, [a.clone(), b.clone()], "oldest first");
    assert_eq!(mine.sessions[0].format, 2);
    assert_eq!(mine.sessions[0].log_path, env.log(&a));
    assert!(
        env.opts.open_reader(&env.dir, &b).is_err(),
        "b's body really is corrupt"
    );

    let theirs = list_sessions(&env.dir, Some(&other_ws)).unwrap();
    assert_eq!(theirs.sessions.iter().map(|s| &s.id).collect::<Vec<_>>(), [&c]);

    let all = list_sessions(&env.dir, None).unwrap();
    assert_eq!(all.sessions.len(), 4);
    let legacy = all.sessions.iter().find(|s| s.id == "legacy").unwrap();
    assert_eq!((legacy.format, legacy.workspace.as_ref()), (1, None));
    assert_eq!(all.problems.len(), 1);
    assert!(all.problems[0].path.ends_with("junk.jsonl"));

    assert!(list_sessions(&env.tmp.path().join("nowhere"), None)
        .unwrap()
        .sessions
        .is_empty());
}

#[test]
fn a_torn_tail_skips_taken_names_and_never_follows_a_link() {
    let env = Env::new();
    let id = torn_log(&env, b"{\"type\":");
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("mine");
    std::fs::write(&target, "mine\n").unwrap();
    std::os::unix::fs::symlink(&target, env.dir.join(format!("{id}.torn-1"))).unwrap();
    std::fs::create_dir(env.dir.join(format!("{id}.torn-2"))).unwrap();
    let w = env.writer(&id);
    drop(w);
    assert_eq!(
        std::fs::read(env.dir.join(format!("{id}.torn-3"))).unwrap(),
        b"{\"type\":"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "mine\n");
}

/// Found by a long trial of the terminal UI: a torn line met while its `/sessions` listed the
/// logs was printed on stderr, over the UI's screen. The default sink can be routed (the UI
/// routes it into its status area) and back to stderr.
#[test]
fn the_default_warning_sink_can_be_routed() {
    let env = Env::new();
    let id = torn_log(&env, br#"{"type":"message","id":"torn"#);
    let said = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let into = said.clone();
    retrace_session::route_warnings(Some(std::sync::Arc::new(move |w: &str| {
        into.lock().unwrap().push(w.to_string());
    })));
    let opts = retrace_session::SessionOptions::default();
    let opened = opts.open_reader(&env.dir, &id);
    retrace_session::route_warnings(None);
    opened.unwrap();
    let said = said.lock().unwrap();
    assert!(said.iter().any(|w| w.contains("torn last line")), "{said:?}");
}

/// A session of one exchange whose log then ends in `torn` (no newline); its id.
fn torn_log(env: &Env, torn: &[u8]) -> SessionId {
    let mut s = env.create();
    exchange(&mut s, &HeadId::main(), "u0", "a0");
    let id = s.id().clone();
    let path = s.log_path().to_path_buf();
    drop(s);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(torn)
        .unwrap();
    id
}

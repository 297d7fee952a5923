use super::*;
use crate::entry::{Entry, ForkEntry, HeadKind, MessageEntry, PathRange, Role, SummaryEntry, SummaryMode};
use crate::ids::{HeadId, MessageId};

fn at() -> String {
    "2026-01-01T00:00:00Z".to_string()
}

fn fork(index: &mut Index, head: &str, parent: Option<&str>, from: Option<&str>, kind: HeadKind) {
    index
        .apply(Entry::Fork(ForkEntry {
            head: head.into(),
            kind,
            from: from.map(MessageId::from),
            parent_head: parent.map(HeadId::from),
            name: None,
            at: at(),
        }))
        .unwrap();
}

fn msg(index: &mut Index, head: &str, id: &str) {
    let h = index.head_ix(head).unwrap();
    let parent = index.tip(h).map(|m| index.nodes[m].msg.id.clone());
    index
        .apply(Entry::Message(MessageEntry {
            id: id.into(),
            parent,
            head: head.into(),
            role: Role::User,
            content: id.to_string(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            usage: None,
            reasoning: None,
            outcome: None,
            at: at(),
        }))
        .unwrap();
}

fn path(index: &Index, head: &str) -> Vec<String> {
    let h = index.head_ix(head).unwrap();
    index
        .path(h)
        .map(|m| index.nodes[m].msg.content.clone())
        .collect()
}

#[test]
fn nested_forks_share_segments_and_extend_their_own() {
    let mut ix = Index::default();
    fork(&mut ix, "main", None, None, HeadKind::Main);
    for id in ["a", "b", "c"] {
        msg(&mut ix, "main", id);
    }
    fork(&mut ix, "f", Some("main"), Some("b"), HeadKind::Fork);
    msg(&mut ix, "f", "x");
    msg(&mut ix, "f", "y");
    fork(&mut ix, "g", Some("f"), Some("x"), HeadKind::Rewind);
    msg(&mut ix, "g", "z");
    msg(&mut ix, "main", "d");
    assert_eq!(path(&ix, "main"), ["a", "b", "c", "d"]);
    assert_eq!(path(&ix, "f"), ["a", "b", "x", "y"]);
    assert_eq!(path(&ix, "g"), ["a", "b", "x", "z"]);
    let g = ix.head_ix("g").unwrap();
    assert_eq!(ix.heads[g].segments.len(), 3);
    assert_eq!(ix.heads[g].len, 4);
    let x = ix.msg_ix("x").unwrap();
    let b = ix.boundary(g, x).unwrap();
    assert_eq!((b.index, b.before.unwrap().as_str()), (2, "b"));
    assert_eq!(ix.position(g, ix.msg_ix("c").unwrap()), None);
}

#[test]
fn a_summary_up_to_puts_the_summary_first() {
    let mut ix = Index::default();
    fork(&mut ix, "main", None, None, HeadKind::Main);
    for id in ["a", "b", "c", "d"] {
        msg(&mut ix, "main", id);
    }
    ix.apply(Entry::Summary(SummaryEntry {
        compaction: false,
        usage: None,
        head: "s".into(),
        parent_head: "main".into(),
        mode: SummaryMode::UpTo,
        turn: 1,
        replaces: PathRange {
            first: "a".into(),
            last: "b".into(),
        },
        kept: Some(PathRange {
            first: "c".into(),
            last: "d".into(),
        }),
        id: "S".into(),
        parent: None,
        role: Role::User,
        content: "S".into(),
        name: None,
        at: at(),
    }))
    .unwrap();
    msg(&mut ix, "s", "e");
    assert_eq!(path(&ix, "s"), ["S", "c", "d", "e"]);
    assert_eq!(path(&ix, "main"), ["a", "b", "c", "d"]);
    let s = ix.head_ix("s").unwrap();
    let c = ix.msg_ix("c").unwrap();
    assert_eq!(ix.boundary(s, c).unwrap().before.unwrap().as_str(), "S");
}

#[test]
fn a_refused_entry_changes_nothing() {
    let mut ix = Index::default();
    fork(&mut ix, "main", None, None, HeadKind::Main);
    msg(&mut ix, "main", "a");
    let wrong_parent = Entry::Message(MessageEntry {
        id: "b".into(),
        parent: None,
        head: "main".into(),
        role: Role::User,
        content: String::new(),
        tool_calls: Vec::new(),
        tool_call_id: None,
        usage: None,
        reasoning: None,
        outcome: None,
        at: at(),
    });
    let err = ix.apply(wrong_parent).unwrap_err();
    assert!(err.contains("names parent null"), "{err}");
    assert!(ix.msg_ix("b").is_none());
    assert_eq!(ix.entries, 2);
    let second_main = Entry::Fork(ForkEntry {
        head: "m2".into(),
        kind: HeadKind::Main,
        from: None,
        parent_head: None,
        name: None,
        at: at(),
    });
    assert!(ix.apply(second_main).is_err());
    assert_eq!(ix.heads.len(), 1);
}

//! A session in which nothing was made is discarded when its frontend leaves (found by a new
//! user's trial: quitting the terminal UI without a prompt left "(no prompt yet)" sessions in
//! every list); one with anything in it, or one another holder has open, stays.

use crate::support::{write, World};
use retrace_control::Service;

/// Whether the session's files are in the data root.
fn on_disk(w: &World, id: &str) -> bool {
    let dir = w.tmp.path().join("home/sessions");
    std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with(id))
}

#[test]
fn a_session_with_nothing_in_it_is_discarded_when_closed() {
    let w = World::new();
    let h = w.open();
    let id = h.session_id().to_string();
    // What a frontend does before the first prompt does not count.
    let model = w.script(serde_json::json!([{"content": "hi"}]));
    w.run(h.set_model(model)).unwrap();
    w.run(h.set_plan_mode(true)).unwrap();
    // Open here: left.
    assert!(!w.run(w.svc.discard_if_empty(&id)).unwrap());
    drop(h);
    w.run(w.svc.wait_closed());
    assert!(on_disk(&w, &id));
    assert!(w.run(w.svc.discard_if_empty(&id)).unwrap());
    assert!(!on_disk(&w, &id), "its log, sidecar and lease are gone");
    let listed = w.run(w.svc.sessions(Some(&w.ws))).unwrap();
    assert!(listed.iter().all(|s| s.id.as_str() != id), "{listed:?}");
    // Gone already: nothing more to do.
    assert!(!w.run(w.svc.discard_if_empty(&id)).unwrap());
}

#[test]
fn a_session_with_a_turn_or_held_elsewhere_stays() {
    let w = World::new();
    let h = w.open();
    let id = h.session_id().to_string();
    w.turn(&h, "make a file", vec![write("a.txt", "1\n")]);
    drop(h);
    w.run(w.svc.wait_closed());
    assert!(!w.run(w.svc.discard_if_empty(&id)).unwrap());
    assert!(on_disk(&w, &id));
    assert_eq!(w.run(w.svc.sessions(Some(&w.ws))).unwrap().len(), 1);

    // An empty session another process holds is left to it.
    let empty = w.open();
    let empty_id = empty.session_id().to_string();
    drop(empty);
    w.run(w.svc.wait_closed());
    let other = Service::new(w.options());
    let held = w.run(other.open(&empty_id, None)).unwrap();
    assert!(!w.run(w.svc.discard_if_empty(&empty_id)).unwrap());
    assert!(on_disk(&w, &empty_id));
    drop(held);
    w.run(other.wait_closed());
    assert!(w.run(w.svc.discard_if_empty(&empty_id)).unwrap());
}

//! A restore meets another process at its worst moments (TESTING.md "A hostile workspace"): a
//! crash with temp files written and the user then swapping directories, a crash after the renames
//! and the user deleting what was written, an editor saving in place just before a rename, and
//! symlinks planted at the names compensation uses. The fault injector stops (or acts at) an exact
//! durable step of the restore; the step is found from a first run's trail of steps.

use std::fs;
use std::io::Write;
use std::path::Path;

use crate::hostile_support::{
    agent_turn, choice, faulty, open, publishing_rename, read, restore_trail, Written,
};
use retrace_checkpoint::CheckpointError;
use retrace_fsutil::{sha256_bytes, FaultInjector};
use retrace_protocol::OnConflict;

/// Restores `s` to turn `t` under `inj`, which must make it fail; the process then dies (nothing
/// of the store's own clean-up runs).
fn restore_dies(s: &retrace_testkit::Scratch, t: u64, inj: &std::sync::Arc<FaultInjector>) {
    let mut store = faulty(s, inj);
    let plan = store.plan_restore(t).unwrap();
    assert!(store.commit(&plan, choice(OnConflict::Refuse)).is_err());
    std::mem::forget(store);
}

/// The names in `dir` that end in `.tmp`.
fn temps(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// Issue 13 item 14: a restore dies with its temp file written; before the next open the user
/// swaps the temp's directory for a symlink to somewhere else. Recovery follows nothing (the
/// directory outside is untouched), sets the transaction aside with a warning instead of locking
/// the user out, and once the directory is back, the next open finds the temp file and removes it.
#[test]
fn a_temp_file_behind_a_swapped_directory_is_found_once_it_is_back() {
    let files: &[Written] = &[("d/f.txt", Some(b"before"), b"agent")];
    let (s, t) = agent_turn(files);
    let written = restore_trail(&s, t)
        .iter()
        .position(|l| l == "write_temp")
        .unwrap() as u64
        + 1;
    let (s, t) = agent_turn(files);
    restore_dies(&s, t, &FaultInjector::crash_at(written + 1));
    let dir = s.workspace.join("d");
    assert_eq!(temps(&dir).len(), 1, "the crash left the temp file");

    let outside = tempfile::tempdir().unwrap();
    let planted = outside.path().join(&temps(&dir)[0]);
    fs::write(&planted, b"not Retrace's").unwrap();
    fs::rename(&dir, s.workspace.join("d.real")).unwrap();
    std::os::unix::fs::symlink(outside.path(), &dir).unwrap();
    let store = open(&s);
    assert_eq!(fs::read(&planted).unwrap(), b"not Retrace's", "nothing followed");
    let report = format!("{:?}", store.fsck());
    assert!(report.contains("tried again"), "{report}");
    drop(store);

    fs::remove_file(&dir).unwrap();
    fs::rename(s.workspace.join("d.real"), &dir).unwrap();
    let store = open(&s);
    assert!(temps(&dir).is_empty(), "found and removed");
    assert_eq!(read(&s, "d/f.txt").unwrap(), b"agent");
    assert!(!format!("{:?}", store.fsck()).contains("tried again"));
}

/// A restore dies after its renames; before the next open the user deletes a file it wrote.
/// Recovery rolls back: the file's forward image comes back (nothing of the user's is
/// overwritten: there is nothing there), and no recovery copy is claimed for a file that is gone.
#[test]
fn a_file_deleted_after_a_crashed_restore_gets_its_forward_image_back() {
    let files: &[Written] = &[("f", Some(b"before"), b"agent")];
    let (s, t) = agent_turn(files);
    let renamed = publishing_rename(&restore_trail(&s, t));
    let (s, t) = agent_turn(files);
    restore_dies(&s, t, &FaultInjector::crash_at(renamed + 1));
    assert_eq!(read(&s, "f").unwrap(), b"before", "the restore's write");
    fs::remove_file(s.workspace.join("f")).unwrap();
    let store = open(&s);
    assert_eq!(
        read(&s, "f").unwrap(),
        b"agent",
        "rolled back to the forward image"
    );
    assert!(store.fsck().ok, "{:?}", store.fsck());
}

/// Found by attack: an editor that saves in place between the last check of a target and its
/// rename wrote into the file the rename replaces. The save is seen, the file is back at its
/// name with the save in it, and the restore fails as an external change: nothing lost.
#[test]
fn a_save_in_place_just_before_the_rename_is_not_lost() {
    for before in [Some(&b"before"[..]), None] {
        let files: &[Written] = &[("f", before, b"agent")];
        let (s, t) = agent_turn(files);
        let k = publishing_rename(&restore_trail(&s, t));
        let (s, t) = agent_turn(files);
        let target = s.workspace.join("f");
        let inj = FaultInjector::act_at(k, move || {
            let mut f = fs::OpenOptions::new().write(true).open(&target).unwrap();
            f.write_all(b"EDITOR-SAVE").unwrap();
        });
        let mut store = faulty(&s, &inj);
        let plan = store.plan_restore(t).unwrap();
        let e = store.commit(&plan, choice(OnConflict::Refuse)).unwrap_err();
        let delete = before.is_none();
        assert!(
            matches!(e, CheckpointError::ExternalChange { .. }),
            "delete={delete}: {e}"
        );
        assert_eq!(read(&s, "f").unwrap(), b"EDITOR-SAVE", "delete={delete}");
        let left: Vec<_> = fs::read_dir(&s.workspace)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "f")
            .collect();
        assert!(left.is_empty(), "delete={delete}: {left:?}");
    }
}

/// Found by attack: a symlink planted at the name of a compensation's `.back.tmp` or at a
/// recovery copy's name (the agent's shell can make one) never leads a write outside.
#[test]
fn planted_symlinks_at_compensation_names_are_never_written_through() {
    let files: &[Written] = &[
        ("a.txt", Some(b"before"), b"agent"),
        ("b.txt", Some(b"b-before"), b"b-agent"),
    ];
    let (s, t) = agent_turn(files);
    // Crash right after the second publishing rename (before the targets' directory barrier).
    let k = publishing_rename(&restore_trail(&s, t)) + 2;
    let (s, t) = agent_turn(files);
    restore_dies(&s, t, &FaultInjector::crash_at(k));
    assert_eq!(
        read(&s, "a.txt").unwrap(),
        b"before",
        "published before the crash"
    );
    let id = fs::read_dir(s.sidecar.join("transactions"))
        .unwrap()
        .flatten()
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".json")
                .to_string()
        })
        .next()
        .unwrap();
    // Dangling symlinks to outside at the `.back.tmp` name of a.txt and at the recovery copy name
    // b.txt gets; b.txt then holds someone else's content.
    let outside = tempfile::tempdir().unwrap();
    let link = |to: &str, at: String| {
        std::os::unix::fs::symlink(outside.path().join(to), s.workspace.join(at)).unwrap()
    };
    link("back", format!(".a.txt.retrace-{id}-0.back.tmp"));
    s.write("b.txt", b"the user's own").unwrap();
    link(
        "copy",
        format!("b.txt.retrace-recovery-{}", &sha256_bytes(b"the user's own")[..8]),
    );
    let store = open(&s);
    assert_eq!(
        fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing written outside"
    );
    assert_eq!(read(&s, "b.txt").unwrap(), b"the user's own", "never overwritten");
    assert_eq!(
        read(&s, "a.txt").unwrap(),
        b"agent",
        "put back despite the planted name"
    );
    drop(store);
}

/// Found by attack: a file changed while its forward image was being copied (after every check)
/// failed the restore as an external change naming the file's absolute path, so the control layer
/// could not report it among the conflicts. The error names the workspace path.
#[test]
fn a_change_caught_while_copying_the_forward_image_names_the_workspace_path() {
    let files: &[Written] = &[("d/f", Some(b"before"), b"agent")];
    let (s, t) = agent_turn(files);
    let k = restore_trail(&s, t)
        .iter()
        .position(|l| l == "write_blob")
        .unwrap() as u64
        + 1;
    let (s, t) = agent_turn(files);
    let target = s.workspace.join("d/f");
    let inj = FaultInjector::act_at(k, move || {
        let mut f = fs::OpenOptions::new().append(true).open(&target).unwrap();
        f.write_all(b" EDITOR-SAVE").unwrap();
    });
    let mut store = faulty(&s, &inj);
    let plan = store.plan_restore(t).unwrap();
    let e = store.commit(&plan, choice(OnConflict::Refuse)).unwrap_err();
    assert!(
        matches!(&e, CheckpointError::ExternalChange { path } if path == "d/f"),
        "{e}"
    );
    assert_eq!(read(&s, "d/f").unwrap(), b"agent EDITOR-SAVE");
}

/// The same race in a restore wide enough for several threads (`workers.rs`): an editor saves in
/// place into one target at one rename step after another, whichever thread is renaming what. The
/// save is never lost — caught and put back when it went into the file a rename replaced, or left
/// in place when it came after its file's rename — and no temp file stays behind.
#[test]
fn a_save_racing_a_wide_restore_is_never_lost() {
    let names: Vec<String> = (0..40).map(|i| format!("d{}/f{i:02}", i % 8)).collect();
    let files: Vec<Written> = names
        .iter()
        .map(|n| (n.as_str(), Some(&b"before"[..]), &b"agent"[..]))
        .collect();
    let (s, t) = agent_turn(&files);
    let first = publishing_rename(&restore_trail(&s, t));
    for k in (first..first + 40).step_by(7) {
        let (s, t) = agent_turn(&files);
        let target = s.workspace.join("d3/f11");
        let inj = FaultInjector::act_at(k, move || {
            let mut f = fs::OpenOptions::new().write(true).open(&target).unwrap();
            f.write_all(b"EDITOR-SAVE").unwrap();
        });
        let mut store = faulty(&s, &inj);
        let plan = store.plan_restore(t).unwrap();
        let done = store.commit(&plan, choice(OnConflict::Refuse));
        let now = read(&s, "d3/f11").unwrap();
        assert!(
            now.starts_with(b"EDITOR-SAVE"),
            "k={k}: {:?}",
            String::from_utf8_lossy(&now)
        );
        if let Err(e) = &done {
            assert!(matches!(e, CheckpointError::ExternalChange { .. }), "k={k}: {e}");
            // Nothing of the restore stayed written.
            for n in names.iter().filter(|n| *n != "d3/f11") {
                assert_eq!(read(&s, n).unwrap(), b"agent", "k={k}: {n}");
            }
        }
        drop(store);
        drop(open(&s));
        let left: Vec<String> = (0..8)
            .flat_map(|d| temps(&s.workspace.join(format!("d{d}"))))
            .collect();
        assert!(left.is_empty(), "k={k}: {left:?}");
    }
}

//! Recovery when a store is opened for writing (SPEC §5.4): finish or roll back what a crashed
//! process left in flight. Idempotent: running it twice changes nothing more.

use std::fs;
use std::io;
use std::path::Path;

use crate::error::{CheckpointError, IoContext, Result};
use crate::fsio::{remove_in_workspace, standing, Standing};
use crate::layout::{journal_rel, manifest_rel, BLOBS_DIR, EXPIRED_DIR, FORWARD_DIR, TURNS_DIR, TX_DIR};
use crate::store::CheckpointStore;
use crate::tx::{TargetAction, TxKind, TxState};

impl CheckpointStore {
    /// Rolls back every `prepared` or `committing` transaction, removes leftovers of committed ones,
    /// and clears sidecar temp files and unreferenced blobs. Afterwards no `.*.retrace-*.tmp` or
    /// `.bak` file of a known transaction is left in the workspace.
    pub fn recover(&mut self) -> Result<()> {
        let Some(root) = self.sidecar.root.clone() else {
            return Ok(());
        };
        let ids: Vec<String> = self.sidecar.transactions.keys().cloned().collect();
        for id in ids {
            let Some(mut m) = self.sidecar.transactions.get(&id).cloned() else {
                continue;
            };
            match m.state {
                TxState::Prepared => {
                    let mut left = None;
                    for (i, t) in m.targets.iter().enumerate() {
                        let Ok(rel) = t.rel() else { continue };
                        // Never through a symlink: a temp that cannot be reached (its directory
                        // swapped for a symlink or a file) is set aside, said, and looked for
                        // again at the next open, once the user has put things back.
                        match remove_in_workspace(&self.opts.fs, &root, &m.temp_path(&root, &rel, i)) {
                            Ok(retrace_fsutil::Removal::Gone) => {}
                            Ok(retrace_fsutil::Removal::Unreachable) => {
                                left.get_or_insert(CheckpointError::Io {
                                    op: "remove",
                                    path: m.temp_path(&root, &rel, i),
                                    source: io::Error::other(
                                        "a directory above it is now a symlink or a file, which is not followed",
                                    ),
                                });
                            }
                            Err(e)
                                if matches!(
                                    e.kind(),
                                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                                ) => {}
                            Err(e) => {
                                left.get_or_insert(CheckpointError::Io {
                                    op: "remove",
                                    path: m.temp_path(&root, &rel, i),
                                    source: e,
                                });
                            }
                        }
                    }
                    if let Some(e) = left {
                        self.set_aside(&m, &e);
                        continue;
                    }
                    // Nothing was published: the pack goes; forward images an earlier build kept
                    // by hard link are still the targets' own inodes and become copies.
                    self.remove_pack(&m)?;
                    self.unshare_forward_blobs(&m, false)?;
                    m.state = TxState::Aborted;
                    self.save_manifest(&m)?;
                    self.remove_dirs_of_undo(&root, &m);
                }
                TxState::Committing => {
                    let n = m.targets.len();
                    // A target recovery cannot settle (someone else's content in it, a directory
                    // turned into a file above it, a symlinked parent) is set aside: the
                    // transaction stays `committing` (the next open tries again), its bytes are
                    // kept where they were, fsck and the listing say what needs attention, and the
                    // store opens: recovery never locks a user out of their session.
                    match self.compensate(&root, &mut m, n) {
                        Some(e) => self.set_aside(&m, &e),
                        None => self.remove_dirs_of_undo(&root, &m),
                    }
                }
                TxState::Committed | TxState::Undone => {
                    for (i, t) in m.targets.iter().enumerate() {
                        if t.action == TargetAction::Delete {
                            if let Ok(rel) = t.rel() {
                                if matches!(standing(&root, &rel), Standing::Unsafe | Standing::FileAbove) {
                                    continue;
                                }
                                // Through its directory reached from the root, never by its whole
                                // path (which can pass `PATH_MAX` beside a long name: then it is
                                // not known to be gone, and the removal is tried).
                                let bak = m.bak_path(&root, &rel, i);
                                let gone = std::fs::symlink_metadata(&bak)
                                    .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
                                if !gone {
                                    crate::fsio::remove_in_workspace(&self.opts.fs, &root, &bak)
                                        .at("remove", &bak)?;
                                }
                            }
                        }
                    }
                    // A restore killed after `committed`, before it recorded that it removed the
                    // directories it chose: those still empty go now, unless anything happened
                    // since; then that is recorded, so a directory made again later stays.
                    if m.state == TxState::Committed
                        && m.kind != TxKind::Undo
                        && m.seq == self.sidecar.state.mutation_seq
                        && !m.removed_dirs.is_empty()
                        && !m.dirs_removed
                    {
                        let dirs = stored_dirs(&m.removed_dirs);
                        let empty = crate::dirs::removable_dirs(&root, &dirs, &Default::default());
                        self.remove_dirs(&root, &empty);
                        m.dirs_removed = true;
                        // Best effort: unrecorded, the next open does this once more.
                        let _ = self.save_manifest(&m);
                    }
                    // An undo that committed before its original was marked undone: it may not
                    // have made again the directories its original removed (they come before
                    // the mark), so they are made now, unless anything happened since.
                    if m.kind == TxKind::Undo && m.state == TxState::Committed {
                        if let Some(orig_id) = m.undoes.clone() {
                            if let Some(mut orig) = self.sidecar.transactions.get(&orig_id).cloned() {
                                if orig.state == TxState::Committed {
                                    if m.seq == self.sidecar.state.mutation_seq {
                                        self.recreate_dirs(&orig);
                                    }
                                    orig.state = TxState::Undone;
                                    orig.undone_by = Some(m.id.clone());
                                    self.save_manifest(&orig)?;
                                }
                            }
                        }
                    }
                }
                TxState::Aborted => {}
            }
        }
        self.remove_sidecar_temps()?;
        // Turns a crash (or a process that never ended them) left with a journal: their record is
        // written whole, so that readers of older builds, which know no journal, see every file.
        let journaled: Vec<u64> = self
            .sidecar
            .turns
            .values()
            .filter(|t| t.source == crate::model::Source::V3)
            .map(|t| t.number)
            .filter(|n| self.sidecar.dir.join(journal_rel(*n)).exists())
            .collect();
        for n in journaled {
            // What the crash cut short: the tools' intents settled against the disk (their writes
            // proved Retrace's own), their temp files and the directories made for them removed.
            // Best effort: an intent left unsettled only makes a restore report a conflict.
            let _ = self.settle_intents(&root, n);
            // Best effort: the journal is read with the record until then.
            let _ = self.compact_turn(n);
        }
        // Turns of the log a crash (or a store dropped mid-turn) left without their `ended`
        // frame: their intents settled the same way, what was settled and `ended` appended.
        let unended = std::mem::take(&mut self.sidecar.log_unended);
        for (n, bytes) in unended {
            let _ = self.settle_log_turn(&root, n, &bytes);
        }
        if !self.has_open_transaction() {
            self.collect_blobs()?;
        }
        Ok(())
    }

    /// Settles log turn `n` (its lines `bytes`) and appends what was settled, then `ended`.
    /// Best effort, as for a journal: an intent left unsettled only makes a restore report a
    /// conflict, and the next open tries again.
    fn settle_log_turn(&mut self, root: &Path, n: u64, bytes: &[u8]) -> Result<()> {
        use crate::logread::{Header, Out};
        let settled = self.settle_intents_in(root, n, bytes)?;
        let mut frames = Vec::new();
        for (i, after) in settled {
            frames.push(Out::bare(match after {
                Some(a) => Header::line(
                    n,
                    crate::record::JournalLine {
                        index: Some(i),
                        after: Some(crate::record::JournalAfter {
                            existed: a.existed,
                            sha256: a.sha256.clone(),
                            mode: a.mode,
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                ),
                None => Header {
                    index: Some(i),
                    ..Header::new("unowned", n)
                },
            }));
        }
        frames.push(Out::bare(Header::new("ended", n)));
        self.log_append(n, frames).map(drop)
    }

    /// After an undo was rolled back (it never committed): the directories its original removed
    /// and the undo's writes made again for their files are left empty; they go again.
    fn remove_dirs_of_undo(&self, root: &Path, m: &crate::tx::Manifest) {
        if m.kind != TxKind::Undo {
            return;
        }
        let Some(orig) = m.undoes.as_ref().and_then(|id| self.sidecar.transactions.get(id)) else {
            return;
        };
        let dirs = stored_dirs(&orig.removed_dirs);
        let empty = crate::dirs::removable_dirs(root, &dirs, &Default::default());
        self.remove_dirs(root, &empty);
    }

    /// Says that transaction `m` could not be settled, and why (a warning of the store).
    fn set_aside(&mut self, m: &crate::tx::Manifest, why: &CheckpointError) {
        self.sidecar.load_problems.push(retrace_protocol::FsckProblem {
            path: manifest_rel(&m.id),
            problem: format!(
                "transaction {} could not be rolled back completely ({why}); it stays open and is tried again when the session is next opened",
                m.id
            ),
            severity: retrace_protocol::Severity::Warning,
            turn: m.turn,
            file: None,
        });
    }

    /// Removes `.*.tmp` files left by interrupted atomic writes inside the sidecar.
    fn remove_sidecar_temps(&self) -> Result<()> {
        let mut dirs = vec![
            self.sidecar.dir.clone(),
            self.sidecar.dir.join(TX_DIR),
            self.sidecar.dir.join(EXPIRED_DIR),
            self.sidecar.dir.join(FORWARD_DIR),
        ];
        for sub in [TURNS_DIR, BLOBS_DIR] {
            let d = self.sidecar.dir.join(sub);
            if let Ok(rd) = fs::read_dir(&d) {
                for e in rd.flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        dirs.push(p.clone());
                        if let Ok(rd2) = fs::read_dir(&p) {
                            dirs.extend(rd2.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
                        }
                    }
                }
            }
        }
        for d in dirs {
            remove_temps_in(&self.opts.fs, &d)?;
        }
        Ok(())
    }
}

/// Directories as a manifest stores them (unusable ones skipped).
fn stored_dirs(dirs: &[String]) -> Vec<retrace_fsutil::RelPath> {
    dirs.iter()
        .filter_map(|d| retrace_fsutil::RelPath::from_stored(d.as_bytes()).ok())
        .collect()
}

fn remove_temps_in(fs_: &retrace_fsutil::Fs, dir: &Path) -> Result<()> {
    let Ok(rd) = fs::read_dir(dir) else { return Ok(()) };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.ends_with(".tmp") && e.path().is_file() {
            fs_.remove_file(&e.path()).at("remove", e.path())?;
        }
    }
    Ok(())
}

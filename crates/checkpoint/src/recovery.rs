//! Recovery when a store is opened for writing (SPEC §5.4): finish or roll back what a crashed
//! process left in flight. Idempotent: running it twice changes nothing more.

use std::fs;
use std::path::Path;

use crate::error::{CheckpointError, IoContext, Result};
use crate::store::CheckpointStore;
use crate::tx::{TargetAction, TxKind, TxState, TX_DIR};

impl CheckpointStore {
    /// Rolls back every `prepared` or `committing` transaction, removes leftovers of committed ones,
    /// and clears sidecar temp files and unreferenced blobs. Afterwards no `.*.retrace-*.tmp` or
    /// `.bak` file of a known transaction is left in the workspace.
    pub fn recover(&mut self) -> Result<()> {
        let Some(root) = self.root.clone() else {
            return Ok(());
        };
        let ids: Vec<String> = self.transactions.keys().cloned().collect();
        let mut first_err: Option<CheckpointError> = None;
        for id in ids {
            let Some(mut m) = self.transactions.get(&id).cloned() else {
                continue;
            };
            match m.state {
                TxState::Prepared => {
                    for (i, t) in m.targets.iter().enumerate() {
                        if let Ok(rel) = t.rel() {
                            self.opts
                                .fs
                                .remove_file(&m.temp_path(&root, &rel, i))
                                .at("remove", rel.under(&root))?;
                        }
                    }
                    // Nothing was published: the pack goes; forward images an earlier build kept
                    // by hard link are still the targets' own inodes and become copies.
                    self.remove_pack(&m)?;
                    self.unshare_forward_blobs(&m, false)?;
                    m.state = TxState::Aborted;
                    self.save_manifest(&m)?;
                }
                TxState::Committing => {
                    let n = m.targets.len();
                    match self.compensate(&root, &mut m, n) {
                        None => {}
                        // Someone else's content sits in a target: it stays, a copy is kept, and
                        // the store still opens; fsck and the listing say what needs attention.
                        Some(e @ CheckpointError::Stuck { .. }) => {
                            self.load_problems.push(retrace_protocol::FsckProblem {
                                path: format!("{}/{}.json", TX_DIR, m.id),
                                problem: e.to_string(),
                                severity: retrace_protocol::Severity::Warning,
                                turn: m.turn,
                                file: None,
                            })
                        }
                        Some(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                TxState::Committed | TxState::Undone => {
                    for (i, t) in m.targets.iter().enumerate() {
                        if t.action == TargetAction::Delete {
                            if let Ok(rel) = t.rel() {
                                let bak = m.bak_path(&root, &rel, i);
                                if bak.exists() {
                                    self.opts.fs.remove_file(&bak).at("remove", &bak)?;
                                }
                            }
                        }
                    }
                    // An undo that committed before its original was marked undone.
                    if m.kind == TxKind::Undo && m.state == TxState::Committed {
                        if let Some(orig_id) = m.undoes.clone() {
                            if let Some(mut orig) = self.transactions.get(&orig_id).cloned() {
                                if orig.state == TxState::Committed {
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
        if !self.has_open_transaction() {
            self.collect_blobs()?;
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Removes `.*.tmp` files left by interrupted atomic writes inside the sidecar.
    fn remove_sidecar_temps(&self) -> Result<()> {
        let mut dirs = vec![
            self.dir.clone(),
            self.dir.join(TX_DIR),
            self.dir.join("expired"),
            self.dir.join(crate::blobs::FORWARD_DIR),
        ];
        for sub in ["turns", "blobs"] {
            let d = self.dir.join(sub);
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

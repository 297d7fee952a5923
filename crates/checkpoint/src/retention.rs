//! Retention (SPEC §3.4): whole oldest turns go first; legacy payloads expire instead of vanishing;
//! then unreferenced blobs are collected.

use crate::blobs::{list_blobs, referenced_blobs};
use crate::error::{IoContext, Result};
use crate::from_record::turn_from_raw;
use crate::layout::{
    expired_rel, manifest_rel, marker_name, meta_rel, turn_rel, BLOBS_DIR, EXPIRED_DIR, FORWARD_DIR,
};
use crate::model::{Format, Source};
use crate::record::{read_record, to_json};
use crate::store::CheckpointStore;

impl CheckpointStore {
    /// Applies the retention limits. Never prunes the current turn or a held one, even over budget.
    pub fn prune(&mut self) -> Result<()> {
        let limits = self.opts.limits;
        // Turns that hold payload and count against the limits, oldest first.
        let counted: Vec<(u64, u64)> = self
            .sidecar
            .turns
            .values()
            .filter(|t| t.source != Source::Expired && !t.expired)
            .map(|t| match &self.current {
                Some(cur) if cur.number == t.number => (t.number, cur.payload_bytes),
                _ => (t.number, t.payload_bytes()),
            })
            .collect();
        let mut count = counted.len();
        let mut bytes: u64 = counted.iter().map(|(_, b)| b).sum();
        let mut changed = false;
        let mut state_changed = false;
        for (n, b) in counted {
            if count <= limits.max_turns && bytes <= limits.max_bytes {
                break;
            }
            if self.is_protected(n) {
                continue;
            }
            let legacy =
                self.sidecar.turns.get(&n).is_some_and(|t| {
                    t.source == Source::Top && t.format != Format::V3 && !t.files.is_empty()
                });
            let in_log = self
                .sidecar
                .turns
                .get(&n)
                .is_some_and(|t| t.source == Source::Log);
            if legacy {
                self.expire_legacy(n)?;
            } else if in_log {
                self.delete_log_turn(n)?;
            } else {
                self.delete_turn(n)?;
            }
            count -= 1;
            bytes = bytes.saturating_sub(b);
            changed = true;
            state_changed |= !in_log;
        }
        if state_changed {
            self.write_state()?;
        }
        let pruned_manifests = self.prune_manifests()?;
        if changed || pruned_manifests {
            self.collect_blobs()?;
        }
        Ok(())
    }

    /// Deletes terminal manifests older than the oldest retained turn (no restore to a retained turn
    /// can need their images), except the current undo target and what redo needs. Retrace's last writes stay known
    /// through `state.json`.
    fn prune_manifests(&mut self) -> Result<bool> {
        let mut oldest: Option<u64> = None;
        for t in self
            .sidecar
            .turns
            .values()
            .filter(|t| t.source != Source::Expired && !t.expired)
        {
            // A retained turn without a sequence (legacy) predates every transaction: keep them all.
            let start = t.start_seq.unwrap_or(0);
            oldest = Some(oldest.map_or(start, |o| o.min(start)));
        }
        let Some(oldest) = oldest else { return Ok(false) };
        // What undo and redo need: the undo target, and the redo target with the undo whose
        // forward images it writes again.
        let mut kept: Vec<String> = self.undo_target().map(|m| m.id.clone()).into_iter().collect();
        if let Some(r) = self.sidecar.redo_target() {
            kept.push(r.id.clone());
            kept.extend(r.undone_by.clone());
        }
        let victims: Vec<String> = self
            .sidecar
            .transactions
            .values()
            .filter(|m| m.state.is_terminal() && !kept.contains(&m.id) && m.seq < oldest)
            .map(|m| m.id.clone())
            .collect();
        let fs_ = self.opts.fs.clone();
        for id in &victims {
            let path = self.sidecar.dir.join(manifest_rel(id));
            fs_.remove_file(&path).at("remove", &path)?;
            self.sidecar.transactions.remove(id);
        }
        Ok(!victims.is_empty())
    }

    /// Deletes a v3 (or marker-only) turn: directory first, then marker.
    fn delete_turn(&mut self, n: u64) -> Result<()> {
        // Write-ahead: `state.json` says the turn is pruned before any of it goes, so a crash in the
        // middle can never leave an older turn offering a code restore across the lost history.
        if self.sidecar.state.pruned_through.is_none_or(|p| p < n) {
            self.sidecar.state.pruned_through = Some(n);
            self.write_state()?;
        }
        let fs_ = self.opts.fs.clone();
        let dir = self.sidecar.dir.join(turn_rel(n));
        // The record first: removing a directory tree is not atomic, and a record that outlived some
        // of its payloads would read as corruption instead of as a pruned turn.
        let meta = self.sidecar.dir.join(meta_rel(n));
        fs_.remove_file(&meta).at("remove", &meta)?;
        fs_.remove_dir_all(&dir).at("remove", &dir)?;
        let marker = self.sidecar.dir.join(marker_name(n));
        fs_.remove_file(&marker).at("remove", &marker)?;
        fs_.sync_dir(&self.sidecar.dir).at("sync", &self.sidecar.dir)?;
        self.sidecar.turns.remove(&n);
        Ok(())
    }

    /// Deletes a turn of the log: its `deleted` frame, which also says the turn is pruned (readers
    /// raise `prunedThrough` to it, FORMATS.md §19.5), so no write of `state.json` comes first.
    /// Written, not synced: lost in a power cut, the turn is listed again, with the history after
    /// it, and deleted again. Its segment goes when every turn in it has.
    fn delete_log_turn(&mut self, n: u64) -> Result<()> {
        self.opts.fs.step("delete_turn").at("delete", &self.sidecar.dir)?;
        let frame = crate::logread::Out::bare(crate::logread::Header::new("deleted", n));
        self.log_append_with(n, vec![frame], false)?;
        if self.sidecar.state.pruned_through.is_none_or(|p| p < n) {
            self.sidecar.state.pruned_through = Some(n);
        }
        self.sidecar.turns.remove(&n);
        self.remove_spent_segments()
    }

    /// Removes every segment of the log none of whose turns is live any more, but the one this
    /// store appends to. `state.json` is written first: the `deleted` frames that said how far
    /// retention went go with their segment.
    fn remove_spent_segments(&mut self) -> Result<()> {
        let active = self.log.as_ref().map(|w| w.segment.first_turn);
        let turns = &self.sidecar.turns;
        let spent: Vec<u64> = self
            .sidecar
            .log_segments
            .iter()
            .filter(|(name, info)| {
                Some(**name) != active
                    && !matches!(info.tail, crate::seglog::Tail::Damaged { .. })
                    && info.turns.iter().all(|t| !turns.contains_key(t))
            })
            .map(|(name, _)| *name)
            .collect();
        if spent.is_empty() {
            return Ok(());
        }
        // Unlisted before it goes: a listed segment that is missing was lost, not removed.
        self.sidecar.state.log_segments.retain(|n| !spent.contains(n));
        self.write_state()?;
        let fs_ = self.opts.fs.clone();
        for name in spent {
            let path = self.sidecar.dir.join(crate::seglog::segment_rel(name));
            fs_.remove_file(&path).at("remove", &path)?;
            self.sidecar.log_segments.remove(&name);
        }
        Ok(())
    }

    /// Moves a legacy record to `expired/` with its content dropped, then removes the original.
    fn expire_legacy(&mut self, n: u64) -> Result<()> {
        let fs_ = self.opts.fs.clone();
        let top = self.sidecar.dir.join(marker_name(n));
        let mut raw = read_record(&top)?;
        raw.expired_file_payload = Some(true);
        raw.coverage = Some("partial".into());
        let legacy_v1 = raw.schema_version.is_none();
        for f in &mut raw.files {
            if f.content.is_some() || f.blob_ref.is_some() || f.sha256.is_some() {
                f.payload_expired = Some(true);
            }
            f.content = None;
            f.blob_ref = None;
            f.encoding = None;
        }
        if legacy_v1 {
            raw.schema_version = Some(2);
        }
        let gaps = raw.coverage_gaps.get_or_insert_with(Vec::new);
        if !gaps
            .iter()
            .any(|g| g.reason == "expired_payload" || g.reason == "expired_file_payload")
        {
            gaps.push(crate::record::RawGap {
                reason: "expired_payload".into(),
                ..Default::default()
            });
        }
        if legacy_v1 && !gaps.iter().any(|g| g.reason == "legacy_unverified") {
            gaps.push(crate::record::RawGap {
                reason: "legacy_unverified".into(),
                ..Default::default()
            });
        }
        let expired_dir = self.sidecar.dir.join(EXPIRED_DIR);
        fs_.create_dir_all(&expired_dir).at("create", &expired_dir)?;
        let rel = expired_rel(n);
        let target = self.sidecar.dir.join(&rel);
        fs_.write_atomic(&target, &to_json(&raw)).at("write", &target)?;
        fs_.remove_file(&top).at("remove", &top)?;
        fs_.sync_dir(&self.sidecar.dir).at("sync", &self.sidecar.dir)?;
        let (turn, _) = turn_from_raw(&raw, Source::Expired, &rel, self.sidecar.root.as_deref());
        self.sidecar.turns.insert(n, turn);
        Ok(())
    }

    /// Removes blobs that no record or manifest references.
    pub fn collect_blobs(&mut self) -> Result<()> {
        if !self.sidecar.dir.join(BLOBS_DIR).is_dir() && !self.sidecar.dir.join(FORWARD_DIR).is_dir() {
            return Ok(());
        }
        let Some(referenced) = referenced_blobs(&self.sidecar.dir)? else {
            return Ok(());
        };
        let fs_ = self.opts.fs.clone();
        for (hex, rel) in list_blobs(&self.sidecar.dir)? {
            if !referenced.contains(&hex) {
                let path = self.sidecar.dir.join(rel);
                fs_.remove_file(&path).at("remove", &path)?;
            }
        }
        Ok(())
    }
}

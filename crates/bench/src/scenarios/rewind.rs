//! Scenarios 4 and 5: rewinds of N files, clean and after a manual edit, on every side.

use std::fs;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use retrace_checkpoint::Limits;
use retrace_protocol::ConflictReason;

use super::{order, progress, spread, World, GIT, GITF, OURS, SIDE_NAMES};
use crate::measure::{median, settle, timed};
use crate::ours::{Ours, Rewind};
use crate::report::{ms, Line};
use crate::shadow::wait_background;
use crate::tree::{apply, diff, scan, text, Edit, Op};

impl World<'_> {
    /// `n` distinct files edited over up to four turns: mostly modified, and for larger `n` one in
    /// twenty deleted and one in twenty replaced by a new file beside it.
    fn rewind_edits(&mut self, n: usize, tag: &str) -> Vec<Vec<Edit>> {
        let mut pool: Vec<String> = self.man[OURS]
            .keys()
            .filter(|k| !k.starts_with("big/"))
            .cloned()
            .collect();
        let groups = n.clamp(1, 4);
        let mut out: Vec<Vec<Edit>> = vec![Vec::new(); groups];
        for i in 0..n.min(pool.len()) {
            let j = i + self.rng.below(pool.len() - i);
            pool.swap(i, j);
            let rel = pool[i].clone();
            let edit = match (n >= 20, i % 20) {
                (true, 0) => Edit { rel, op: Op::Delete },
                (true, 1) => {
                    let parent = rel.rsplit_once('/').map_or("", |(p, _)| p).to_string();
                    let len = self.rng.range(500, 12_000);
                    Edit::write(format!("{parent}/new-{tag}-{i}.txt"), text(&mut self.rng, len))
                }
                _ => {
                    let len = self.rng.range(500, 20_000);
                    Edit::write(rel, text(&mut self.rng, len))
                }
            };
            out[i % groups].push(edit);
        }
        out
    }

    /// Applies the edit groups on every side: Retrace through its capture seam (one turn per group),
    /// each shadow repository with a checkpoint per group. Returns Retrace's first turn and each
    /// repository's commit before the edits.
    fn setup_rewind(&mut self, ours: &mut Ours, groups: &[Vec<Edit>]) -> Result<(u64, [String; 3])> {
        let mut heads: [String; 3] = Default::default();
        for side in [GIT, GITF] {
            heads[side] = self.git_mut(side)?.head()?;
        }
        let mut first = None;
        for (i, g) in groups.iter().enumerate() {
            let t = ours.turn(&format!("rewind setup {i}"), g, &mut self.man[OURS])?;
            first.get_or_insert(t);
            for side in [GIT, GITF] {
                for e in g {
                    apply(&self.ws[side], e, &mut self.man[side])?;
                }
                self.git_mut(side)?.checkpoint(&format!("rewind setup {i}"))?;
            }
        }
        wait_background(&self.tag)?;
        Ok((first.context("no edits")?, heads))
    }

    fn rewind_store(&self) -> Result<Ours> {
        Ours::open(&self.path("ours-rewind.ckpt"), &self.ws[OURS], Limits::default())
    }

    /// Scenario 3: rewind of `n` files. Retrace: `plan_restore` + durable `commit` (every file
    /// checked against its ownership proof, refusing on conflict); shadow git: `git reset --hard`.
    /// Both workspaces are scanned afterwards and must equal their state before the edits.
    pub(super) fn rewind(&mut self, n: usize) -> Result<Line> {
        let reps = if n >= 1000 {
            self.cfg.reps.min(3)
        } else {
            self.cfg.reps
        };
        let mut ours = self.rewind_store()?;
        let mut unsynced = Ours::open_unsynced(
            &self.path(&format!("ours-rewind-unsynced-{n}.ckpt")),
            &self.ws[OURS],
            Limits::default(),
        )?;
        let mut nofsync = Vec::new();
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut failed: [Option<String>; 3] = Default::default();
        let mut fsyncs = Vec::new();
        let mut creates = Vec::new();
        let mut renames = Vec::new();
        let (mut plans, mut commits) = (Vec::new(), Vec::new());
        for rep in 0..reps {
            let groups = self.rewind_edits(n, &format!("r{n}-{rep}"));
            let base = self.man.clone();
            let (first, heads) = self.setup_rewind(&mut ours, &groups)?;
            for side in order(rep) {
                settle();
                if side == OURS {
                    let mark = ours.trail().len();
                    let (d, r) = timed(|| ours.rewind(first, false))?;
                    let steps = ours.trail().split_off(mark);
                    let count = |p: &str| steps.iter().filter(|l| l.starts_with(p)).count();
                    fsyncs.push(count("sync") as u64);
                    creates.push(count("create") as u64);
                    renames.push(count("rename") as u64);
                    plans.push(ours.last_phases.0);
                    commits.push(ours.last_phases.1);
                    times[OURS].push(d);
                    match r {
                        Rewind::Done(o) if o.files_written.len() + o.files_deleted.len() == n => {}
                        Rewind::Done(o) => {
                            failed[OURS].get_or_insert(format!(
                                "wrote {} and deleted {} files, expected {n} in all",
                                o.files_written.len(),
                                o.files_deleted.len()
                            ));
                        }
                        Rewind::Refused(c) => {
                            failed[OURS].get_or_insert(format!("refused: {c:?}"));
                        }
                    }
                } else {
                    let git = self.git_mut(side)?.clone();
                    let (d, _) = timed(|| git.reset_hard(&heads[side]))?;
                    times[side].push(d);
                }
            }
            for side in [OURS, GIT, GITF] {
                let got = scan(&self.ws[side])?;
                let d = diff(&base[side], &got, 5);
                if !d.is_empty() {
                    failed[side].get_or_insert(d.join("; "));
                }
                self.man[side] = got;
            }
            // The same rewind with fsync off (its own edits and sidecar): what the fsyncs cost.
            let groups = self.rewind_edits(n, &format!("u{n}-{rep}"));
            let base = self.man[OURS].clone();
            let mut first = None;
            for (i, g) in groups.iter().enumerate() {
                let t = unsynced.turn(&format!("unsynced {i}"), g, &mut self.man[OURS])?;
                first.get_or_insert(t);
            }
            settle();
            let (d, r) = timed(|| unsynced.rewind(first.unwrap_or(0), false))?;
            nofsync.push(d);
            let got = scan(&self.ws[OURS])?;
            if !matches!(r, Rewind::Done(_)) || !diff(&base, &got, 1).is_empty() {
                bail!("the unsynced rewind of {n} files did not restore the workspace");
            }
            self.man[OURS] = got;
        }
        for side in [OURS, GIT, GITF] {
            if let Some(why) = &failed[side] {
                progress(&format!(
                    "rewind_{n}: the {} side FAILED its check: {why}",
                    SIDE_NAMES[side]
                ));
            }
        }
        spread(&format!("rewind_{n}"), self.files, &times);
        let t = times.map(|v| median(&v));
        let shown = |side: usize| {
            if failed[side].is_some() {
                "FAIL".to_string()
            } else {
                ms(t[side])
            }
        };
        let mid = |mut v: Vec<u64>| {
            v.sort();
            v.get(v.len() / 2).copied().unwrap_or(0)
        };
        let mut line = Line::new(self.name(&format!("rewind_{n}")))
            .field("ours", shown(OURS))
            .field("git", shown(GIT))
            .field("git_fsync", shown(GITF))
            .field("files", n.to_string())
            .field("ours_nofsync", ms(median(&nofsync)))
            .field("ours_fsyncs", mid(fsyncs).to_string())
            .field("ours_creates", mid(creates).to_string())
            .field("ours_renames", mid(renames).to_string())
            .field("ours_plan", ms(median(&plans)))
            .field("ours_commit", ms(median(&commits)))
            .field("verified", "manifest");
        if failed[OURS].is_none() && failed[GIT].is_none() {
            line = line.ratio(t[GIT].as_secs_f64(), t[OURS].as_secs_f64());
        }
        Ok(line)
    }

    /// Scenario 3, correctness: the user edits one of the `n` files by hand after the agent's last
    /// turn, then rewinds. Retrace must refuse (conflict `manual_edit`, nothing written), and with
    /// `skip` restore the other files and keep the hand edit. `git reset --hard` overwrites the hand
    /// edit without a word: a failure of that side, not a speed result.
    pub(super) fn rewind_manual_edit(&mut self, n: usize) -> Result<Line> {
        progress(&format!(
            "{} files: rewind of {n} files with one manual edit",
            self.files
        ));
        let mut ours = self.rewind_store()?;
        let groups = self.rewind_edits(n, "manual");
        let victim = groups
            .iter()
            .flatten()
            .find(|e| matches!(e.op, Op::Write(_)) && self.man[OURS].contains_key(&e.rel))
            .map(|e| e.rel.clone())
            .context("no modified file to edit by hand")?;
        let original = fs::read(self.ws[OURS].join(&victim))?;
        let base = self.man.clone();
        let (first, heads) = self.setup_rewind(&mut ours, &groups)?;
        let mut hand = b"// edited by hand in the editor, not by the agent\n".to_vec();
        hand.extend(text(&mut self.rng, 600));
        for side in [OURS, GIT, GITF] {
            apply(
                &self.ws[side],
                &Edit::write(victim.clone(), hand.clone()),
                &mut self.man[side],
            )?;
        }
        let after_hand = self.man.clone();
        let mut verdict: [String; 3] = Default::default();
        for side in order(0) {
            settle();
            if side == OURS {
                let refused = match ours.rewind(first, false)? {
                    Rewind::Refused(c) => c
                        .iter()
                        .any(|c| c.path == victim && c.reason == ConflictReason::ManualEdit),
                    Rewind::Done(_) => false,
                };
                let untouched = diff(&after_hand[OURS], &scan(&self.ws[OURS])?, 1).is_empty();
                let skipped = match ours.rewind(first, true)? {
                    Rewind::Done(o) => o.conflicts.iter().any(|c| c.path == victim),
                    Rewind::Refused(_) => false,
                };
                let mut want = base[OURS].clone();
                if let Some(e) = after_hand[OURS].get(&victim) {
                    want.insert(victim.clone(), e.clone());
                }
                let kept = diff(&want, &scan(&self.ws[OURS])?, 1).is_empty();
                verdict[OURS] = if refused && untouched && skipped && kept {
                    "kept_edit".into()
                } else {
                    progress(&format!(
                        "manual edit: Retrace FAILED (refused {refused}, untouched {untouched}, \
                         skipped {skipped}, rest restored and edit kept {kept})"
                    ));
                    "FAIL".into()
                };
            } else {
                let git = self.git_mut(side)?.clone();
                git.reset_hard(&heads[side])?;
                let got = scan(&self.ws[side])?;
                let kept = got.get(&victim) == after_hand[side].get(&victim);
                verdict[side] = if kept {
                    "kept_edit".into()
                } else {
                    "overwrote_edit".into()
                };
            }
        }
        // Back to the base state on every side (the hand edit undone by hand).
        for side in [OURS, GIT, GITF] {
            let mut m = scan(&self.ws[side])?;
            apply(
                &self.ws[side],
                &Edit::write(victim.clone(), original.clone()),
                &mut m,
            )?;
            let d = diff(&base[side], &m, 5);
            if !d.is_empty() && side == OURS {
                bail!(
                    "after the manual-edit rewind, Retrace's workspace differs: {}",
                    d.join("; ")
                );
            }
            self.man[side] = m;
        }
        Ok(Line::new(self.name(&format!("rewind_{n}_manual_edit")))
            .field("ours", verdict[OURS].clone())
            .field("git", verdict[GIT].clone())
            .field("git_fsync", verdict[GITF].clone())
            .field("ours_refuse", "conflict_manual_edit_nothing_written")
            .field("ours_skip", format!("restored_{}_kept_1", n - 1)))
    }
}

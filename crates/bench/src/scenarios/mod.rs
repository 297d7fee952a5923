//! The scenarios of TESTING.md "Benchmarks" 1–6, each run on both sides in the same process and
//! interleaved (the order of the sides rotates from one repetition to the next), with the page cache
//! written back (`sync`) before every timed operation so no side pays for another's dirty data.
//!
//! Three identical copies of the generated tree: one for Retrace, one for shadow git with git's
//! defaults (what the peers ship), one for shadow git with `core.fsync=all`. Every side keeps a
//! manifest (path → SHA-256, mode) of what its workspace must hold; after each rewind the whole
//! workspace is scanned and compared with it.

mod exec;
mod rewind;

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use retrace_checkpoint::{CheckpointStore, Limits, StoreOptions};

use crate::measure::{disk_use, fsync_batch_price, fsync_price, median, settle, timed, DiskUse};
use crate::ours::{keep_everything, Ours};
use crate::report::{bytes, ms, suffix, Line};
use crate::shadow::{wait_background, ShadowGit};
use crate::tree::{apply, diff, plan_tree, scan, ten_kb_candidates, text, write_tree, Edit, Manifest, Rng};

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// Tree sizes, in files, in the order they run.
    pub sizes: Vec<usize>,
    /// Repetitions of each timed scenario (the median is reported).
    pub reps: usize,
    /// Turns of the per-turn / storage run (200 in the published figures).
    pub turns: usize,
    /// Rewind sizes, in files (1, 100, 1000); sizes above half the tree are skipped.
    pub rewind_files: Vec<usize>,
    /// Seed of everything generated.
    pub seed: u64,
    /// Where the temp directories go (a real disk, not a tmpfs).
    pub base_dir: PathBuf,
    /// Keep the temp directories (their paths go to stderr).
    pub keep: bool,
    /// The `retrace` binary for `whole_turn`, if any.
    pub retrace: Option<PathBuf>,
    /// This binary, for the memory probes.
    pub exe: PathBuf,
    /// Size of the file of the peak-memory scenario (32 MiB in the published figures).
    pub big_bytes: u64,
    /// Files of the fsync-batching probe printed to stderr (100).
    pub probe_files: usize,
}

/// The three sides.
const OURS: usize = 0;
const GIT: usize = 1;
const GITF: usize = 2;
const SIDE_NAMES: [&str; 3] = ["ours", "git", "git_fsync"];

/// The order of the sides in repetition `k`: rotated, so no side always goes first.
fn order(k: usize) -> [usize; 3] {
    let mut o = [OURS, GIT, GITF];
    o.rotate_left(k % 3);
    o
}

/// Runs every size; `out` receives each line as soon as its size is done. Returns every line, and
/// fails if a check that must hold did not (a side that fails a correctness check is reported in
/// its line, not as an error).
pub fn run(cfg: &Config, out: &mut dyn FnMut(&Line)) -> Result<Vec<Line>> {
    warn_if_tmpfs(&cfg.base_dir);
    let mut all = Vec::new();
    for &files in &cfg.sizes {
        let lines = run_size(cfg, files)?;
        for l in &lines {
            out(l);
        }
        all.extend(lines);
    }
    Ok(all)
}

/// The samples behind a median, to stderr: all of them when few, else percentiles.
fn spread(what: &str, files: usize, times: &[Vec<Duration>; 3]) {
    let parts: Vec<String> = SIDE_NAMES
        .iter()
        .zip(times)
        .filter(|(_, v)| !v.is_empty())
        .map(|(name, v)| {
            let mut v = v.clone();
            v.sort();
            let shown: Vec<String> = if v.len() <= 7 {
                v.iter().map(|d| ms(*d)).collect()
            } else {
                [0, v.len() / 10, v.len() / 2, v.len() * 9 / 10, v.len() - 1]
                    .iter()
                    .map(|&i| ms(v[i]))
                    .collect()
            };
            let how = if v.len() <= 7 {
                ""
            } else {
                " (min p10 p50 p90 max)"
            };
            format!("{name} [{}]{how}", shown.join(" "))
        })
        .collect();
    progress(&format!("{files} files: {what} samples: {}", parts.join("; ")));
}

fn progress(msg: &str) {
    eprintln!("retrace-bench: {msg}");
}

fn warn_if_tmpfs(dir: &Path) {
    let Ok(dir) = fs::canonicalize(dir) else { return };
    let Ok(mounts) = fs::read_to_string("/proc/mounts") else {
        return;
    };
    let best = mounts
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (_, at, kind) = (it.next()?, it.next()?, it.next()?);
            dir.starts_with(at).then(|| (at.len(), kind.to_string()))
        })
        .max();
    if let Some((_, kind)) = best {
        if kind == "tmpfs" || kind == "ramfs" {
            progress(&format!(
                "warning: {} is on {kind}: fsync is free there, pass --dir on a real disk",
                dir.display()
            ));
        }
    }
}

/// Runs every scenario on one tree size and returns its lines in the published order.
pub fn run_size(cfg: &Config, files: usize) -> Result<Vec<Line>> {
    let mut w = World::new(cfg, files)?;
    let result = w.run_all();
    let dir = w.tmp_path.clone();
    match w.tmp.take() {
        Some(t) if cfg.keep => progress(&format!("kept {}", t.keep().display())),
        Some(t) => {
            // Git's background gc may still hold files there.
            let _ = wait_background(&w.tag);
            if let Err(e) = t.close() {
                progress(&format!("could not remove {}: {e}", dir.display()));
            }
        }
        None => {}
    }
    result
}

struct World<'a> {
    cfg: &'a Config,
    files: usize,
    sfx: String,
    tmp: Option<tempfile::TempDir>,
    tmp_path: PathBuf,
    ws: [PathBuf; 3],
    man: [Manifest; 3],
    git: [Option<ShadowGit>; 3],
    candidates: Vec<String>,
    rng: Rng,
    tag: String,
    fsync_file: Duration,
}

impl<'a> World<'a> {
    fn new(cfg: &'a Config, files: usize) -> Result<World<'a>> {
        fs::create_dir_all(&cfg.base_dir)?;
        let tmp = tempfile::Builder::new()
            .prefix("retrace-bench-")
            .tempdir_in(&cfg.base_dir)
            .context("create the temp dir")?;
        let tmp_path = fs::canonicalize(tmp.path())?;
        let ws = SIDE_NAMES.map(|s| tmp_path.join(format!("ws-{s}")));
        progress(&format!(
            "{files} files: generating three copies under {}",
            tmp_path.display()
        ));
        let specs = plan_tree(files, cfg.seed ^ files as u64);
        for w in &ws {
            fs::create_dir_all(w)?;
        }
        let manifest = write_tree(&specs, &[&ws[0], &ws[1], &ws[2]])?;
        settle();
        let (fsync_file, fsync_dir) = fsync_price(&tmp_path.join("fsync-probe"), 15)?;
        progress(&format!(
            "fsync on this disk: {} per new 10 KB file, {} per directory",
            ms(fsync_file),
            ms(fsync_dir)
        ));
        let batch = fsync_batch_price(&tmp_path.join("fsync-batch"), cfg.probe_files)?;
        progress(&format!(
            "{} new 10 KB files made durable: fsync one by one {}, fsync from 16 threads at once {}, \
             one syncfs {}",
            cfg.probe_files,
            ms(batch.sequential),
            ms(batch.parallel),
            ms(batch.syncfs)
        ));
        Ok(World {
            cfg,
            files,
            sfx: suffix(files),
            tmp: Some(tmp),
            tmp_path,
            ws,
            man: [manifest.clone(), manifest.clone(), manifest],
            git: [None, None, None],
            candidates: ten_kb_candidates(&specs),
            rng: Rng::new(cfg.seed.wrapping_add(files as u64)),
            tag: format!("{}-{files}-{}", std::process::id(), cfg.seed),
            fsync_file,
        })
    }

    fn name(&self, base: &str) -> String {
        format!("{base}{}", self.sfx)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp_path.join(name)
    }

    fn git_mut(&mut self, side: usize) -> Result<&mut ShadowGit> {
        self.git[side].as_mut().context("no shadow repository yet")
    }

    /// A per-turn edit: one ~10 KB text file replaced by ~10 KB of new text.
    fn ten_kb_edit(&mut self) -> Edit {
        let rel = self.candidates[self.rng.below(self.candidates.len())].clone();
        let len = self.rng.range(9_000, 11_000);
        Edit::write(rel, text(&mut self.rng, len))
    }

    fn run_all(&mut self) -> Result<Vec<Line>> {
        let mut lines = Vec::new();
        progress(&format!("{} files: first checkpoint", self.files));
        let first = self.first_checkpoint()?;
        progress(&format!(
            "{} files: {} turns of one ~10 KB edit",
            self.files, self.cfg.turns
        ));
        let (per_turn, storage, kept) = self.turns_and_storage()?;
        let resume = self.resume(kept)?;
        let mut rewinds = Vec::new();
        for n in self.cfg.rewind_files.clone() {
            if n * 2 > self.files {
                continue;
            }
            progress(&format!("{} files: rewind of {n} files", self.files));
            rewinds.push(self.rewind(n)?);
        }
        let manual = self.rewind_manual_edit(100.min(self.files / 4).max(2))?;
        let whole = self.whole_turn()?;
        progress(&format!("{} files: the git backend", self.files));
        let git_turns = (self.cfg.reps * 3).max(10);
        let gitmode = crate::gitmode::run(
            &self.tmp_path,
            self.files,
            self.cfg.seed,
            self.cfg.reps,
            git_turns,
            self.cfg.retrace.as_deref(),
        )?;
        progress(&format!("{} files: peak memory", self.files));
        let memory = self.memory()?;
        self.verify_all("the end of the run")?;
        lines.push(per_turn);
        lines.extend(first);
        lines.extend(rewinds);
        lines.push(manual);
        lines.push(storage);
        lines.push(resume);
        lines.extend(whole);
        lines.extend(gitmode);
        lines.push(memory);
        Ok(lines)
    }

    /// Every workspace must hold exactly what its manifest says.
    fn verify_all(&self, when: &str) -> Result<()> {
        for side in [OURS, GIT, GITF] {
            let got = scan(&self.ws[side])?;
            let d = diff(&self.man[side], &got, 5);
            if !d.is_empty() {
                bail!(
                    "{} workspace differs from its manifest at {when}: {}",
                    SIDE_NAMES[side],
                    d.join("; ")
                );
            }
        }
        Ok(())
    }

    /// Scenario 2: the first checkpoint of a new session. Retrace: a fresh sidecar and the first
    /// turn's capture (it copies only the file the turn edits). Shadow git: `git init` and the
    /// commit of the whole tree. Bytes and inodes: the whole sidecar vs the whole shadow `.git`,
    /// measured after git's detached auto-gc (if any) has finished (the ratio: git at its
    /// smallest), and for git also just after the commit (`git_before_gc`).
    fn first_checkpoint(&mut self) -> Result<Vec<Line>> {
        let reps = self.cfg.reps;
        // With core.fsync=all, git fsyncs every loose object: about one fsync per file.
        let fsync_reps = if self.files > 2_000 { 1 } else { reps.min(3) };
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut use_: [DiskUse; 3] = Default::default();
        let mut before_gc: [DiskUse; 3] = Default::default();
        let mut bg = [Duration::ZERO; 3];
        for rep in 0..reps {
            for side in order(rep) {
                if side == GITF && rep >= fsync_reps {
                    continue;
                }
                if side == OURS {
                    let dir = self.path(&format!("ours-first-{rep}.ckpt"));
                    let edit = self.ten_kb_edit();
                    let original = fs::read(self.ws[OURS].join(&edit.rel))?;
                    let ws = self.ws[OURS].clone();
                    let man = &mut self.man[OURS];
                    settle();
                    let (d, ours) = timed(|| {
                        let mut o = Ours::open(&dir, &ws, Limits::default())?;
                        o.turn("first turn", std::slice::from_ref(&edit), man)?;
                        Ok(o)
                    })?;
                    drop(ours);
                    times[OURS].push(d);
                    use_[OURS] = disk_use(&dir)?;
                    apply(&ws, &Edit::write(edit.rel.clone(), original), man)?;
                    fs::remove_dir_all(&dir)?;
                } else {
                    let shadow = self.path(&format!("{}-first-{rep}", SIDE_NAMES[side]));
                    let ws = self.ws[side].clone();
                    let tag = self.tag.clone();
                    settle();
                    let (d, git) = timed(|| {
                        let mut g = ShadowGit::init(&shadow, &ws, side == GITF, &tag)?;
                        g.checkpoint("checkpoint 0")?;
                        Ok(g)
                    })?;
                    times[side].push(d);
                    // What the commit left, before git's detached gc (if any) packs it: the gc
                    // first writes its pack, and deletes the loose objects only at the end.
                    before_gc[side] = disk_use(&git.git_dir)?;
                    bg[side] = wait_background(&self.tag)?;
                    use_[side] = disk_use(&git.git_dir)?;
                    if let Some(old) = self.git[side].replace(git) {
                        if let Some(p) = old.git_dir.parent() {
                            fs::remove_dir_all(p)?;
                        }
                    }
                }
            }
        }
        spread("first_checkpoint_time", self.files, &times);
        let t = times.clone().map(|v| median(&v));
        let time = Line::new(self.name("first_checkpoint_time"))
            .field("ours", ms(t[OURS]))
            .field("git", ms(t[GIT]))
            .field("git_fsync", ms(t[GITF]))
            .field("git_background_gc", ms(bg[GIT]))
            .field("git_fsync_background_gc", ms(bg[GITF]))
            .ratio(t[GIT].as_secs_f64(), t[OURS].as_secs_f64());
        let size = Line::new(self.name("first_checkpoint_bytes"))
            .field("ours", bytes(use_[OURS].allocated))
            .field("git", bytes(use_[GIT].allocated))
            .field("git_fsync", bytes(use_[GITF].allocated))
            .field("git_before_gc", bytes(before_gc[GIT].allocated))
            .field("ours_apparent", bytes(use_[OURS].apparent))
            .field("git_apparent", bytes(use_[GIT].apparent))
            .ratio(use_[GIT].allocated as f64, use_[OURS].allocated as f64);
        let inodes = Line::new(self.name("first_checkpoint_inodes"))
            .field("ours", use_[OURS].inodes.to_string())
            .field("git", use_[GIT].inodes.to_string())
            .field("git_fsync", use_[GITF].inodes.to_string())
            .field("git_before_gc", before_gc[GIT].inodes.to_string())
            .ratio(use_[GIT].inodes as f64, use_[OURS].inodes as f64);
        Ok(vec![time, size, inodes])
    }

    /// Scenarios 1 and 5: `turns` turns, each editing one ~10 KB file. Retrace: a sidecar that
    /// keeps every turn (like a shadow repository); shadow git: the repositories of the first
    /// checkpoint, so their size includes the first commit. The floor is copying the edited file's
    /// bytes into a new file and fsyncing it. A second Retrace sidecar with the default retention
    /// (100 turns) shows what a user's disk actually holds. Returns the per-turn line, the storage
    /// line, and the number of turns the default sidecar kept.
    fn turns_and_storage(&mut self) -> Result<(Line, Line, usize)> {
        let turns = self.cfg.turns;
        let dir = self.path("ours-turns.ckpt");
        let mut ours = Ours::open(&dir, &self.ws[OURS], keep_everything())?;
        let mut unsynced = Ours::open_unsynced(
            &self.path("ours-unsynced.ckpt"),
            &self.ws[OURS],
            keep_everything(),
        )?;
        let mut nofsync = Vec::new();
        let floor_dir = self.path("floor");
        fs::create_dir_all(&floor_dir)?;
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut floor = Vec::new();
        let mut fsyncs = Vec::new();
        let mut steps = Vec::new();
        for turn in 0..turns {
            let edit = self.ten_kb_edit();
            let src = self.ws[OURS].join(&edit.rel);
            let dst = floor_dir.join(format!("{turn}"));
            settle();
            let (d, _) = timed(|| {
                let mut from = File::open(&src)?;
                let mut to = File::create(&dst)?;
                io::copy(&mut from, &mut to)?;
                to.sync_all()?;
                Ok(())
            })?;
            floor.push(d);
            let prompt = format!("turn {turn}");
            for side in order(turn) {
                settle();
                if side == OURS {
                    let (f0, s0) = (ours.fsyncs(), ours.steps());
                    let man = &mut self.man[OURS];
                    let (d, _) = timed(|| ours.turn(&prompt, std::slice::from_ref(&edit), man))?;
                    times[OURS].push(d);
                    fsyncs.push(ours.fsyncs() - f0);
                    steps.push(ours.steps() - s0);
                } else {
                    let ws = self.ws[side].clone();
                    let mut git = self.git[side].take().context("no shadow repository")?;
                    let man = &mut self.man[side];
                    let r = timed(|| {
                        apply(&ws, &edit, man)?;
                        git.checkpoint(&prompt)
                    });
                    self.git[side] = Some(git);
                    times[side].push(r?.0);
                    wait_background(&self.tag)?;
                }
            }
            // The same kind of turn with fsync off, on another edit: what the fsyncs cost.
            let edit = self.ten_kb_edit();
            let man = &mut self.man[OURS];
            settle();
            let (d, _) = timed(|| unsynced.turn(&prompt, std::slice::from_ref(&edit), man))?;
            nofsync.push(d);
        }
        drop(ours);
        drop(unsynced);
        self.profile_turn()?;
        fs::remove_dir_all(&floor_dir)?;
        // The same turns with the default retention (untimed).
        let retained = self.path("ours-retention.ckpt");
        let mut kept_store = Ours::open(&retained, &self.ws[OURS], Limits::default())?;
        for turn in 0..turns {
            let edit = self.ten_kb_edit();
            kept_store.turn(&format!("turn {turn}"), &[edit], &mut self.man[OURS])?;
        }
        let kept = kept_store.store.turns().count();
        drop(kept_store);
        settle();
        wait_background(&self.tag)?;
        let all_turns = disk_use(&dir)?;
        let default_ret = disk_use(&retained)?;
        let g = disk_use(&self.git_mut(GIT)?.git_dir.clone())?;
        let gf = disk_use(&self.git_mut(GITF)?.git_dir.clone())?;
        spread("per_turn_capture", self.files, &times);
        let t = times.clone().map(|v| median(&v));
        let fs_med = {
            let mut f = fsyncs.clone();
            f.sort();
            f.get(f.len() / 2).copied().unwrap_or(0)
        };
        let st_med = {
            let mut s = steps.clone();
            s.sort();
            s.get(s.len() / 2).copied().unwrap_or(0)
        };
        let per_turn = Line::new(self.name("per_turn_capture"))
            .field("ours", ms(t[OURS]))
            .field("git", ms(t[GIT]))
            .field("git_fsync", ms(t[GITF]))
            .field("floor", ms(median(&floor)))
            .field("ours_nofsync", ms(median(&nofsync)))
            .field("ours_fsyncs", fs_med.to_string())
            .field("ours_durable_steps", st_med.to_string())
            .field("fsync", ms(self.fsync_file))
            .ratio(t[GIT].as_secs_f64(), t[OURS].as_secs_f64());
        let storage = Line::new(self.name(&format!("storage_{turns}_turns")))
            .field("ours", bytes(all_turns.allocated))
            .field("git", bytes(g.allocated))
            .field("git_fsync", bytes(gf.allocated))
            .field("ours_default_retention", bytes(default_ret.allocated))
            .field("ours_apparent", bytes(all_turns.apparent))
            .field("git_apparent", bytes(g.apparent))
            .ratio(g.allocated as f64, all_turns.allocated as f64);
        Ok((per_turn, storage, kept))
    }

    /// Where a Retrace turn's time goes: five turns phase by phase on a fresh sidecar, with the
    /// durable steps of each phase (to stderr).
    fn profile_turn(&mut self) -> Result<()> {
        let dir = self.path("ours-profile.ckpt");
        let mut ours = Ours::open(&dir, &self.ws[OURS], Limits::default())?;
        let mut phases: [Vec<Duration>; 4] = Default::default();
        let mut labels: [Vec<String>; 4] = Default::default();
        for i in 0..5 {
            let edit = self.ten_kb_edit();
            let edits = std::slice::from_ref(&edit);
            settle();
            let mark = ours.trail().len();
            let (d0, _) = timed(|| ours.begin(&format!("profile {i}")))?;
            let t1 = ours.trail().len();
            let (d1, _) = timed(|| ours.capture_before(edits, &self.man[OURS]))?;
            let t2 = ours.trail().len();
            let root = self.ws[OURS].clone();
            let man = &mut self.man[OURS];
            let (d2, _) = timed(|| apply(&root, &edit, man))?;
            let (d3, _) = timed(|| ours.capture_after(edits))?;
            let trail = ours.trail();
            labels = [
                trail[mark..t1].to_vec(),
                trail[t1..t2].to_vec(),
                Vec::new(),
                trail[t2..].to_vec(),
            ];
            for (p, d) in phases.iter_mut().zip([d0, d1, d2, d3]) {
                p.push(d);
            }
        }
        let names = ["begin_turn", "capture_before", "edit", "capture_after"];
        let parts: Vec<String> = names
            .iter()
            .zip(phases.iter().zip(&labels))
            .map(|(n, (p, l))| {
                let syncs = l.iter().filter(|s| s.starts_with("sync")).count();
                format!("{n} {} ({syncs} fsyncs: {})", ms(median(p)), l.join(" "))
            })
            .collect();
        progress(&format!(
            "{} files: one Retrace turn, median of 5: {}",
            self.files,
            parts.join("; ")
        ));
        Ok(())
    }

    /// Scenario 4 (checkpoint half): resuming a session and listing its checkpoints. Retrace:
    /// `CheckpointStore::open` + `list()` of the default-retention sidecar; shadow git: `git log`
    /// of as many commits. (The 10,000-message log with three heads has no git counterpart; it is
    /// `cargo bench -p retrace-session -- open_project`.)
    fn resume(&mut self, kept: usize) -> Result<Line> {
        let dir = self.path("ours-retention.ckpt");
        let mut times: [Vec<Duration>; 3] = Default::default();
        for rep in 0..self.cfg.reps {
            for side in order(rep) {
                settle();
                let (d, n) = if side == OURS {
                    let ws = self.ws[OURS].clone();
                    timed(|| {
                        let s = CheckpointStore::open(&dir, &ws, StoreOptions::default())?;
                        Ok(s.list().len())
                    })?
                } else {
                    let git = self.git_mut(side)?.clone();
                    timed(|| git.list(kept))?
                };
                if n != kept {
                    bail!("{} listed {n} checkpoints, expected {kept}", SIDE_NAMES[side]);
                }
                times[side].push(d);
            }
        }
        spread("resume", self.files, &times);
        let t = times.map(|v| median(&v));
        Ok(Line::new(self.name(&format!("resume_{kept}_turns")))
            .field("ours", ms(t[OURS]))
            .field("git", ms(t[GIT]))
            .field("git_fsync", ms(t[GITF]))
            .ratio(t[GIT].as_secs_f64(), t[OURS].as_secs_f64()))
    }
}

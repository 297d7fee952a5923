//! The git backend (`backend = "git"`) beside shadow git: what a session that covers shell
//! commands pays, on its own copy of the generated tree.
//!
//! - `git_first_snapshot`: the first full snapshot (every file hashed and written as a blob, the
//!   stat cache and the watches set up) against shadow git's `git init` + first commit of the tree.
//! - `git_turn`: a turn with one shell command that rewrites one ~10 KB file: `begin_turn`, the
//!   refresh before the command, the write (the command), the refresh after it, the capture of
//!   what changed (its before-image from the object store, durable) and the turn's end; against
//!   the same write plus shadow git's `git add -A && git commit`.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use retrace_checkpoint::{BeginTurn, Known, Limits};
use retrace_gitstore::{PlainWalk, Side, Snapshot, Snapshotter};

use crate::measure::{median, settle, timed};
use crate::ours::Ours;
use crate::report::{ms, suffix, Line};
use crate::shadow::{wait_background, ShadowGit};
use crate::tree::{apply, plan_tree, ten_kb_candidates, text, write_tree, Edit, Rng};

/// The git backend's lines for a tree of `files` files, in `dir` (a temp directory of the run);
/// with `retrace`, the binary, also `git_whole_turn` ([`crate::gitmode_exec`]).
pub fn run(
    dir: &Path,
    files: usize,
    seed: u64,
    reps: usize,
    turns: usize,
    retrace: Option<&Path>,
) -> Result<Vec<Line>> {
    let specs = plan_tree(files, seed ^ files as u64);
    let ours_ws = dir.join("gitmode-ws-ours");
    let git_ws = dir.join("gitmode-ws-git");
    fs::create_dir_all(&ours_ws)?;
    fs::create_dir_all(&git_ws)?;
    let mut man_ours = write_tree(&specs, &[&ours_ws])?;
    let mut man_git = write_tree(&specs, &[&git_ws])?;
    let candidates = ten_kb_candidates(&specs);
    let tag = format!("{}-gitmode-{files}", std::process::id());
    let sfx = suffix(files);
    let walk = PlainWalk {
        root: fs::canonicalize(&ours_ws)?,
    };

    // The first full snapshot, against git's first commit (each on a fresh store, `reps` times).
    let mut first = [Vec::new(), Vec::new()];
    for rep in 0..reps.max(1) {
        settle();
        let store = dir.join(format!("gitmode-first-{rep}"));
        let (d, _) = timed(|| {
            let mut s = Snapshotter::open(&store, &walk.root, Default::default())?;
            let mut snap = None;
            s.refresh(&mut snap, &walk)?;
            s.save_cache()?;
            Ok(())
        })?;
        first[0].push(d);
        fs::remove_dir_all(&store)?;
        settle();
        let shadow = dir.join(format!("gitmode-shadow-first-{rep}"));
        let (d, _) = timed(|| {
            let mut g = ShadowGit::init(&shadow, &git_ws, false, &tag)?;
            g.checkpoint("first")
        })?;
        first[1].push(d);
        wait_background(&tag)?;
        fs::remove_dir_all(&shadow)?;
    }
    let (f_ours, f_git) = (median(&first[0]), median(&first[1]));

    // Turns with one shell command rewriting one file.
    let root = walk.root.clone();
    let sidecar = dir.join("gitmode-sidecar");
    let mut ours = Ours::open(&sidecar, &root, Limits::default())?;
    let mut snapper = Snapshotter::open(&sidecar.join("git"), &root, Default::default())?;
    let mut current: Option<Snapshot> = None;
    snapper.refresh(&mut current, &walk)?;
    let mut shadow = ShadowGit::init(&dir.join("gitmode-shadow"), &git_ws, false, &tag)?;
    shadow.checkpoint("first")?;
    wait_background(&tag)?;
    let mut rng = Rng::new(seed.wrapping_add(files as u64 * 7));
    let mut times = [Vec::new(), Vec::new()];
    let mut hashed = Vec::new();
    for rep in 0..turns.max(2) {
        let rel = candidates[rng.below(candidates.len())].clone();
        let len = rng.range(9_000, 11_000);
        let edit = Edit::write(rel.clone(), text(&mut rng, len));
        settle();
        let (d, seen) = timed(|| {
            ours.store
                .begin_turn(BeginTurn::default())
                .context("begin_turn")?;
            snapper.refresh(&mut current, &walk)?;
            apply(&root, &edit, &mut man_ours)?;
            let (found, stats) = snapper.refresh(&mut current, &walk)?;
            let mut items = Vec::new();
            let mut kept = Vec::new();
            for c in &found {
                if let Side::File(e) = &c.before {
                    items.push((
                        PathBuf::from(c.path.to_lossy()),
                        Known::File {
                            bytes: snapper.objects().read_blob(&e.id)?,
                            mode: e.mode,
                        },
                    ));
                    kept.push(PathBuf::from(c.path.to_lossy()));
                }
            }
            ours.store.capture_before_known(items, Some("bash"))?;
            ours.store.capture_after(&kept)?;
            ours.store.finish_turn()?;
            Ok(stats.seen)
        })?;
        if rep > 0 {
            times[0].push(d);
            hashed.push(seen);
        }
        settle();
        let (d, _) = timed(|| {
            apply(&git_ws, &edit, &mut man_git)?;
            shadow.checkpoint("turn")
        })?;
        if rep > 0 {
            times[1].push(d);
        }
        wait_background(&tag)?;
    }
    let (t_ours, t_git) = (median(&times[0]), median(&times[1]));
    let secs = |d: Duration| d.as_secs_f64();
    let whole = match retrace {
        Some(bin) => Some(
            crate::gitmode_exec::WholeTurn {
                bin,
                dir,
                specs: &specs,
                candidates: &candidates,
                seed: seed.wrapping_add(files as u64),
                reps,
                git: t_git,
                suffix: &sfx,
            }
            .run()?,
        ),
        None => None,
    };
    let mut lines = vec![
        Line::new(format!("git_first_snapshot{sfx}"))
            .field("ours", ms(f_ours))
            .field("git", ms(f_git))
            .ratio(secs(f_git), secs(f_ours)),
        Line::new(format!("git_turn{sfx}"))
            .field("ours", ms(t_ours))
            .field("git", ms(t_git))
            .field(
                "paths_read",
                hashed.iter().max().copied().unwrap_or(0).to_string(),
            )
            .field("last_full_walk", snapper.last_full_walk.is_some().to_string())
            .ratio(secs(t_git), secs(t_ours)),
    ];
    lines.extend(whole);
    Ok(lines)
}

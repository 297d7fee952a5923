//! A whole `retrace exec` turn against a shadow-git checkpoint, and the peak memory of a turn.

use std::fs;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::json;

use super::{order, progress, spread, World, GIT, GITF, OURS};
use crate::measure::{median, settle, timed};
use crate::mem;
use crate::report::{bytes, ms, Line};
use crate::shadow::wait_background;
use crate::tree::{apply, Op};

impl World<'_> {
    /// The whole turn through the real binary: `retrace exec --model script:FILE` writing one
    /// ~10 KB file (process start, session log, the tool's atomic durable write, the capture).
    /// Compared with the shadow-git checkpoint alone (the write plus `git add -A && git commit`),
    /// which leaves the peers' agent loop out of their figure.
    pub(super) fn whole_turn(&mut self) -> Result<Option<Line>> {
        let Some(bin) = self.cfg.retrace.clone() else {
            progress("whole_turn skipped: no retrace binary (see --retrace)");
            return Ok(None);
        };
        progress(&format!(
            "{} files: whole turn through {}",
            self.files,
            bin.display()
        ));
        let home = self.path("retrace-home");
        let xdg = self.path("xdg-config");
        let scripts = self.path("scripts");
        for d in [&home, &xdg, &scripts] {
            fs::create_dir_all(d)?;
        }
        let mut session: Option<String> = None;
        let mut times: [Vec<Duration>; 3] = Default::default();
        let mut first = Duration::ZERO;
        for rep in 0..=self.cfg.reps {
            let edit = self.ten_kb_edit();
            let Op::Write(bytes) = &edit.op else {
                bail!("a per-turn edit is a write")
            };
            let content = String::from_utf8(bytes.clone())?;
            let script = scripts.join(format!("s{rep}.json"));
            let doc = json!({"responses": [
                {"content": "Writing the file.", "tool_calls": [
                    {"name": "write_file", "arguments": {"path": edit.rel, "content": content}}
                ]},
                {"content": "done"}
            ]});
            fs::write(&script, doc.to_string())?;
            for side in order(rep) {
                settle();
                if side == OURS {
                    let mut c = Command::new(&bin);
                    c.arg("exec")
                        .arg("--json")
                        .arg("--model")
                        .arg(format!("script:{}", script.display()));
                    match &session {
                        Some(id) => c.args(["--session", id]),
                        None => c.arg("--workspace").arg(&self.ws[OURS]),
                    };
                    c.arg(format!("edit {}", edit.rel));
                    crate::gitmode_exec::isolate(&mut c, &self.tmp_path, &home, &xdg);
                    let (d, _, last) = crate::gitmode_exec::run_exec(&mut c, "retrace exec")?;
                    if session.is_none() {
                        session = last["session_id"].as_str().map(str::to_string);
                        first = d;
                    } else {
                        times[OURS].push(d);
                    }
                    // The tool wrote the file: record it (it keeps the file's mode).
                    let mode = self.man[OURS].get(&edit.rel).map_or(0o644, |e| e.mode);
                    self.man[OURS].insert(
                        edit.rel.clone(),
                        crate::tree::Entry {
                            sha256: retrace_fsutil::sha256_bytes(bytes),
                            mode,
                        },
                    );
                } else {
                    let ws = self.ws[side].clone();
                    let mut git = self.git[side].take().context("no shadow repository")?;
                    let man = &mut self.man[side];
                    let r = timed(|| {
                        apply(&ws, &edit, man)?;
                        git.checkpoint("whole turn")
                    });
                    self.git[side] = Some(git);
                    let d = r?.0;
                    if rep > 0 {
                        times[side].push(d);
                    }
                    wait_background(&self.tag)?;
                }
            }
        }
        spread("whole_turn", self.files, &times);
        let t = times.map(|v| median(&v));
        Ok(Some(
            Line::new(self.name("whole_turn"))
                .field("ours", ms(t[OURS]))
                .field("git", ms(t[GIT]))
                .field("git_fsync", ms(t[GITF]))
                .field("ours_new_session", ms(first))
                .field("git_counts", "checkpoint_only")
                .ratio(t[GIT].as_secs_f64(), t[OURS].as_secs_f64()),
        ))
    }

    /// Scenario 6: peak memory capturing and restoring one large file (32 MiB), each side in its
    /// own process. Retrace streams; git reads the file whole to hash and deflate it.
    pub(super) fn memory(&mut self) -> Result<Line> {
        let rel = "big/blob.bin";
        let seed = self.rng.next_u64();
        for side in [OURS, GIT] {
            let p = self.ws[side].join(rel);
            fs::create_dir_all(p.parent().context("no parent")?)?;
            mem::write_big(&p, seed, self.cfg.big_bytes)?;
            mem::record_big(&mut self.man[side], &self.ws[side], rel)?;
        }
        self.git_mut(GIT)?.checkpoint("large file")?;
        wait_background(&self.tag)?;
        settle();
        let git = self.git_mut(GIT)?.clone();
        let peaks = mem::measure(
            &self.cfg.exe,
            &self.ws[OURS],
            &self.path("ours-mem.ckpt"),
            &git,
            rel,
            seed ^ 0xA5A5,
            self.cfg.big_bytes,
        )?;
        wait_background(&self.tag)?;
        let mib = self.cfg.big_bytes >> 20;
        Ok(Line::new(format!("peak_memory_{mib}mib{}", self.sfx))
            .field("ours", bytes(peaks.ours))
            .field("git", bytes(peaks.git))
            .field("baseline", bytes(peaks.baseline))
            .ratio(peaks.git as f64, peaks.ours as f64))
    }
}

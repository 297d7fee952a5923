//! `git_whole_turn`: a whole `retrace exec --backend git` turn through the real binary, whose one
//! shell call rewrites one ~10 KB file (process start, the session log, opening the git backend's
//! store and its stat scan, the snapshots around the command, the capture of what it changed, the
//! turn's end), against the same write plus shadow git's `git add -A && git commit` (the
//! `git_turn` line's git figure: the peers' checkpoint alone, their agent loop left out).

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Result};
use serde_json::{json, Value};

use crate::measure::{median, settle, timed};
use crate::report::{ms, Line};
use crate::tree::{text, write_tree, FileSpec, Rng};

/// Runs `c` (the `retrace` binary) from `dir` with its own data root `home` and config directory
/// `xdg`, none of the user's settings, and no input.
pub(crate) fn isolate(c: &mut Command, dir: &Path, home: &Path, xdg: &Path) {
    c.current_dir(dir)
        .env("RETRACE_HOME", home)
        .env("XDG_CONFIG_HOME", xdg)
        .env("HOME", dir)
        .stdin(Stdio::null());
    for k in [
        "RETRACE_CONFIG",
        "RETRACE_MODEL",
        "RETRACE_BASE_URL",
        "RETRACE_BASH",
        "XDG_DATA_HOME",
    ] {
        c.env_remove(k);
    }
}

/// Runs `c` (a `retrace exec --json`), timed: its time, its standard output and its last line,
/// which must say `ok` (`what` names the command in the error).
pub(crate) fn run_exec(c: &mut Command, what: &str) -> Result<(Duration, String, Value)> {
    let (d, out) = timed(|| Ok(c.output()?))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let last: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if !out.status.success() || last["ok"] != json!(true) {
        bail!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok((d, stdout, last))
}

/// What the whole-turn line is measured on.
pub struct WholeTurn<'a> {
    /// The `retrace` binary.
    pub bin: &'a Path,
    /// The run's temp directory.
    pub dir: &'a Path,
    /// The generated tree, written again for this line's workspace.
    pub specs: &'a [FileSpec],
    /// The ~10 KB files a turn may rewrite.
    pub candidates: &'a [String],
    /// The seed of the edits.
    pub seed: u64,
    /// Timed turns (after the one that makes the session and its first snapshot).
    pub reps: usize,
    /// Shadow git's median checkpoint of the same edit (`git_turn`'s git figure).
    pub git: Duration,
    /// The line's name suffix (`_80k`).
    pub suffix: &'a str,
}

impl WholeTurn<'_> {
    /// Runs the turns and makes the line.
    pub fn run(&self) -> Result<Line> {
        let ws = self.dir.join("gitmode-ws-exec");
        fs::create_dir_all(&ws)?;
        write_tree(self.specs, &[&ws])?;
        // A user's workspace was written more than the stat cache's racy margin before the session
        // looks at it; a tree written a moment ago has every file re-read by the next few turns
        // (none of their hashes can be trusted yet), which no user's repository costs.
        std::thread::sleep(
            std::time::Duration::from_nanos(retrace_gitstore::RACY_MARGIN_NS.unsigned_abs())
                + std::time::Duration::from_millis(200),
        );
        let home = self.dir.join("gitmode-exec-home");
        let xdg = self.dir.join("gitmode-exec-xdg");
        let scripts = self.dir.join("gitmode-exec-scripts");
        for d in [&home, &xdg, &scripts] {
            fs::create_dir_all(d)?;
        }
        let mut rng = Rng::new(self.seed ^ 0x5eed_e7ec);
        let mut session: Option<String> = None;
        let mut first = Duration::ZERO;
        let mut times = Vec::new();
        for rep in 0..=self.reps.max(1) {
            let rel = &self.candidates[rng.below(self.candidates.len())];
            let len = rng.range(9_000, 11_000);
            // The command copies new bytes from outside the workspace over the file.
            let source = scripts.join(format!("content-{rep}"));
            fs::write(&source, text(&mut rng, len))?;
            let script = scripts.join(format!("s{rep}.json"));
            let command = format!("cp '{}' '{rel}'", source.display());
            let doc = json!({"responses": [
                {"content": "Rewriting the file.", "tool_calls": [
                    {"name": "bash", "arguments": {"command": command}}
                ]},
                {"content": "done"}
            ]});
            fs::write(&script, doc.to_string())?;
            let mut c = Command::new(self.bin);
            c.args(["exec", "--json", "--allow-bash", "--model"])
                .arg(format!("script:{}", script.display()));
            match &session {
                Some(id) => c.args(["--session", id]),
                None => c.args(["--backend", "git", "--workspace"]).arg(&ws),
            };
            c.arg(format!("rewrite {rel}"));
            isolate(&mut c, self.dir, &home, &xdg);
            settle();
            let (d, stdout, last) = run_exec(&mut c, "retrace exec --backend git")?;
            // The command's change was found and attributed to it (else the figure is of a
            // turn that did less than the peers' checkpoint).
            if !stdout.contains(rel.as_str()) {
                bail!("retrace exec --backend git did not report the change of `{rel}`: {stdout}");
            }
            match session {
                None => {
                    session = last["session_id"].as_str().map(str::to_string);
                    first = d;
                }
                Some(_) => times.push(d),
            }
        }
        let ours = median(&times);
        Ok(Line::new(format!("git_whole_turn{}", self.suffix))
            .field("ours", ms(ours))
            .field("git", ms(self.git))
            .field("ours_new_session", ms(first))
            .field("git_counts", "checkpoint_only")
            .ratio(self.git.as_secs_f64(), ours.as_secs_f64()))
    }
}

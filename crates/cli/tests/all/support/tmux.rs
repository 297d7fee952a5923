//! The terminal tests' tmux: the real binary started in a detached tmux session of a given size,
//! in the environment every CLI test isolates (`isolated_retrace`), keys and text sent to it, its
//! screen read back and waited on, and what the terminal UI's screens are read for (the input
//! line, the rows joined). `tui_cli`, `tui_input_cli` and `render_cli` share it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux server of its own (its socket in the test's temp dir) with one session; killed when
/// dropped.
pub struct Tmux {
    /// The server's socket.
    pub socket: PathBuf,
    /// The session (and its one pane).
    pub name: String,
}

impl Tmux {
    /// `tmux` talking to this server.
    pub fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.socket);
        c
    }

    /// Sends keys by their tmux names (`Enter`, `C-u`, `M-b`).
    pub fn keys(&self, keys: &[&str]) {
        let ok = self
            .tmux()
            .args(["send-keys", "-t", &self.name])
            .args(keys)
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Types `text` as it is.
    pub fn text(&self, text: &str) {
        let ok = self
            .tmux()
            .args(["send-keys", "-l", "-t", &self.name, text])
            .status()
            .unwrap();
        assert!(ok.success());
    }

    /// Esc, then Esc again a moment later, as a person presses them (sent in one go, the two
    /// bytes would reach the program as one escape sequence).
    pub fn esc_esc(&self) {
        self.keys(&["Escape"]);
        std::thread::sleep(Duration::from_millis(150));
        self.keys(&["Escape"]);
    }

    /// A tmux format (`#{pane_pid}`, `#{alternate_on}`…) of the pane.
    pub fn pane(&self, format: &str) -> String {
        let out = self
            .tmux()
            .args(["display-message", "-p", "-t", &self.name, format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The pane's rows as shown now.
    pub fn screen(&self) -> String {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (up to 20 s) until `done` holds, showing the screen when it never does.
    pub fn wait(&self, what: &str, done: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "waited for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .arg("kill-server")
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn have_tmux() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether tmux is there to run a test; outside CI a missing one skips it (said on stderr), in
/// CI it fails (`.ci/run` installs it).
pub fn tmux_or_skip() -> bool {
    if have_tmux() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "tmux is missing: .ci/run installs it"
    );
    eprintln!("skipped: tmux is not installed");
    false
}

/// A temp dir with an empty workspace in it (`ws`), as every terminal test starts.
pub fn scratch() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    (tmp, ws)
}

/// `retrace ARGS` in a new detached tmux session of `w`×`h` (left on screen after it exits when
/// `remain`), in the environment every CLI test isolates, once its first screen shows. `None`
/// when tmux is missing outside CI (`.ci/run` installs it).
pub fn launch(tmp: &Path, name: &str, size: (u16, u16), args: &[String], remain: bool) -> Option<Tmux> {
    launch_with(tmp, name, size, args, remain, &[])
}

/// [`launch`] with `env` set too.
pub fn launch_with(
    tmp: &Path,
    name: &str,
    (w, h): (u16, u16),
    args: &[String],
    remain: bool,
    env: &[(&str, &str)],
) -> Option<Tmux> {
    if !tmux_or_skip() {
        return None;
    }
    let isolated = super::isolated_retrace(tmp);
    // `env -u NAME …` first: after the first NAME=VALUE, env takes the rest as the command.
    let (mut unset, mut set) = (String::new(), String::new());
    for (k, v) in isolated.get_envs() {
        match v {
            Some(v) => set.push_str(&format!(" {}='{}'", k.to_string_lossy(), v.to_string_lossy())),
            None => unset.push_str(&format!(" -u {}", k.to_string_lossy())),
        }
    }
    for (k, v) in env {
        set.push_str(&format!(" {k}='{v}'"));
    }
    let mut line = format!("env{unset}{set}");
    line.push_str(&format!(" '{}'", env!("CARGO_BIN_EXE_retrace")));
    for a in args {
        line.push_str(&format!(" '{a}'"));
    }
    let t = Tmux {
        socket: tmp.join("tmux.sock"),
        name: name.to_string(),
    };
    let (w, h) = (w.to_string(), h.to_string());
    let mut start = t.tmux();
    start.args(["new-session", "-d", "-s", name, "-x", &w, "-y", &h, &line]);
    if remain {
        start.args([";", "set-option", "-t", name, "remain-on-exit", "on"]);
    }
    assert!(start.status().unwrap().success());
    t.wait("the first screen", |s| s.contains("Esc Esc rewind"));
    Some(t)
}

/// The UI's arguments for workspace `ws` and a script model answering `script` (written to
/// `tmp/script.json`).
pub fn script_args(tmp: &Path, ws: &Path, script: serde_json::Value) -> Vec<String> {
    let file = tmp.join("script.json");
    std::fs::write(&file, script.to_string()).unwrap();
    model_args(ws, &format!("script:{}", file.display()))
}

/// `--workspace WS --model MODEL`.
pub fn model_args(ws: &Path, model: &str) -> Vec<String> {
    vec![
        "--workspace".to_string(),
        ws.display().to_string(),
        "--model".to_string(),
        model.to_string(),
    ]
}

/// The screen's rows joined into one line (each row trimmed): text the UI wrapped reads whole.
pub fn flat(screen: &str) -> String {
    screen
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Waits until the session shown in `t` has ended (Ctrl-D was pressed).
pub fn wait_gone(t: &Tmux) {
    let start = Instant::now();
    while t
        .tmux()
        .args(["has-session", "-t", &t.name])
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "still running:\n{}",
            t.screen()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The text in the input box: the row under its top border, without the borders.
pub fn input_line(screen: &str) -> String {
    let rows: Vec<&str> = screen.lines().collect();
    let top = rows
        .iter()
        .rposition(|r| r.starts_with('┌') && (r.contains("Enter") || r.contains("Esc")))
        .expect("the input box");
    rows.get(top + 1)
        .map(|r| {
            r.trim_start_matches('│')
                .trim_end()
                .trim_end_matches('│')
                .trim_end()
                .to_string()
        })
        .unwrap_or_default()
}

/// Waits until the input box shows `want`.
pub fn wait_input(t: &Tmux, want: &str) {
    t.wait(&format!("the input line {want:?}"), |s| input_line(s) == want);
}

/// Pastes `text` as a terminal does with bracketed paste on (`paste-buffer -p`).
pub fn paste(t: &Tmux, text: &str) {
    let ok = t
        .tmux()
        .args(["set-buffer", "-b", "p", "--", text])
        .status()
        .unwrap();
    assert!(ok.success());
    let ok = t
        .tmux()
        .args(["paste-buffer", "-p", "-d", "-b", "p", "-t", &t.name])
        .status()
        .unwrap();
    assert!(ok.success());
}

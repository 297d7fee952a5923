//! How a failure is printed (SPEC §11): `retrace: error: MESSAGE` on standard error, its causes
//! each said once, and with `--json` the failure as JSON on standard output too; a command line
//! clap refuses is such a usage failure when `--json` is among its arguments.

use std::process::ExitCode;

use crate::failure::Failure;

/// How a failure is printed besides standard error: with `--json`, as JSON on standard output
/// (SPEC §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonOut {
    No,
    /// One document, `{ok: false, error}` (a refused plan: the plan with `ok` and `error`).
    Document,
    /// `exec`'s last JSON Lines line, `{"type": "result", "ok": false, "error"}`.
    ExecResult,
}

/// An error and its causes, each said once: the project's error types already quote their source.
fn error_chain(err: &anyhow::Error) -> String {
    let mut out = err.to_string();
    for cause in err.chain().skip(1) {
        let s = cause.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
    }
    out
}

/// Prints a failure: on standard error, and with `--json` as JSON on standard output.
pub fn report(f: &Failure, json: JsonOut) -> ExitCode {
    use std::io::Write;
    let message = error_chain(&f.error);
    let _ = writeln!(
        std::io::stderr(),
        "retrace: error: {}",
        crate::output::shown_path(&message)
    );
    print_failure_json(f, &message, json);
    ExitCode::from(f.code)
}

/// The JSON of a failure on standard output, when `--json` asked for it.
fn print_failure_json(f: &Failure, message: &str, json: JsonOut) {
    use std::io::Write;
    let doc = f.json(message);
    let text = match json {
        JsonOut::No => return,
        JsonOut::Document => serde_json::to_string_pretty(&doc),
        JsonOut::ExecResult => {
            serde_json::to_string(&serde_json::json!({"type": "result", "ok": false, "error": doc["error"]}))
        }
    };
    if let Ok(text) = text {
        let _ = writeln!(std::io::stdout(), "{text}");
    }
}

/// A command line clap refused. With `--json` among the arguments it is a JSON usage failure
/// (exit 2) as well as clap's own message on standard error; help and version print as usual.
pub fn parse_failure(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // A `--json` after `--` is a prompt's text, not the flag. `--json=VALUE` (which clap refuses:
    // the flag takes no value) counts too: the failure is about the flag itself.
    let wants_json = args
        .iter()
        .skip(1)
        .take_while(|a| *a != "--")
        .any(|a| a == "--json" || a.to_str().is_some_and(|a| a.starts_with("--json=")));
    if !wants_json
        || matches!(
            e.kind(),
            ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        )
    {
        e.exit();
    }
    let _ = e.print();
    let rendered = e.to_string();
    let message = rendered
        .lines()
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    let json = if args.get(1).is_some_and(|a| a == "exec") {
        JsonOut::ExecResult
    } else {
        JsonOut::Document
    };
    // The message went to standard error in clap's own words above.
    print_failure_json(&Failure::usage(message.clone()), &message, json);
    ExitCode::from(2)
}

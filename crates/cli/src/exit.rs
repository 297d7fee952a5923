//! The one table from the controller's error codes to what the CLI makes of them (SPEC §11): the
//! exit code (0 ok, 1 error — a session held by another writer included —, 2 usage, 3 refused,
//! 4 confirmation required) and the hint, the CLI's words for what to do, said after the message.
//! Every command maps errors through here; nothing else decides an exit code from an error. A
//! hint in a command's own flags (what to do about a refused rewind or revert) is added by that
//! command (`Failure::hinted`).

use retrace_protocol::{ErrorCode, ErrorDetails, Missing};

/// The exit code of an error with `code`.
pub fn exit_code(code: ErrorCode) -> u8 {
    match code {
        // The arguments name nothing, or something that does not fit.
        ErrorCode::Usage | ErrorCode::NotFound => 2,
        // Asked, and the answer is no: the plan or the reason is printed.
        ErrorCode::Refused | ErrorCode::Conflict | ErrorCode::TurnRunning => 3,
        ErrorCode::ConfirmationRequired => 4,
        ErrorCode::Busy
        | ErrorCode::StalePlan
        | ErrorCode::Model
        | ErrorCode::Cancelled
        | ErrorCode::Io
        | ErrorCode::Corrupt
        | ErrorCode::Internal => 1,
    }
}

/// The CLI's words for what to do about an error of `code`, appended to its message.
pub fn hint(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Model => " (--model picks the model: deepseek:NAME, openai:NAME, demo or script:FILE)",
        ErrorCode::StalePlan => " (run the command again)",
        ErrorCode::TurnRunning => " (wait for the turn, or stop it with Ctrl-C)",
        ErrorCode::Usage
        | ErrorCode::NotFound
        | ErrorCode::Refused
        | ErrorCode::Conflict
        | ErrorCode::ConfirmationRequired
        | ErrorCode::Busy
        | ErrorCode::Cancelled
        | ErrorCode::Io
        | ErrorCode::Corrupt
        | ErrorCode::Internal => "",
    }
}

/// The hint for `e`: its details' when they say more than its code (which workspace, which
/// session, which log), else its code's.
pub fn hint_for(e: &retrace_protocol::Error) -> String {
    match &e.details {
        Some(ErrorDetails::WorkspaceUnknown { .. }) => {
            " (run the command in that workspace, or give it with --workspace DIR)".to_string()
        }
        Some(ErrorDetails::NotFound {
            what: Missing::Session,
            ..
        }) => " (`retrace sessions` lists the sessions of the workspace; -c takes its latest)".to_string(),
        Some(ErrorDetails::DamagedLog { session_id, .. }) => format!(
            " (`retrace fsck --session {session_id} --repair` moves them into a file beside the log; `retrace rewind --scope code` works meanwhile)"
        ),
        // The model's own words already list the choices: say them once.
        _ if e.code == ErrorCode::Model && e.message.contains("script:FILE") => String::new(),
        _ => hint(e.code).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_contract_exit_code() {
        let want = |c: ErrorCode| match c.as_str() {
            "usage" | "not_found" => 2,
            "refused" | "conflict" | "turn_running" => 3,
            "confirmation_required" => 4,
            "busy" | "stale_plan" | "model" | "cancelled" | "io" | "corrupt" | "internal" => 1,
            other => panic!("no exit code decided for `{other}`"),
        };
        for c in ErrorCode::ALL {
            assert_eq!(exit_code(c), want(c), "{c}");
        }
    }

    #[test]
    fn hints_say_what_to_do() {
        let e = |code, msg: &str| retrace_protocol::Error::new(code, msg.to_string());
        assert!(hint_for(&e(ErrorCode::Model, "no key")).contains("--model picks the model"));
        // The model's message already lists the choices.
        assert_eq!(hint_for(&e(ErrorCode::Model, "use demo or script:FILE")), "");
        assert_eq!(hint_for(&e(ErrorCode::Io, "disk full")), "");
        assert!(hint_for(&e(ErrorCode::StalePlan, "stale")).contains("again"));
    }
}

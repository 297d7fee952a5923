//! The one table from the controller's error codes to the CLI's exit codes (SPEC §11): 0 ok,
//! 1 error (a session held by another writer included), 2 usage, 3 refused, 4 confirmation
//! required. Every command maps errors through here; nothing else decides an exit code from an
//! error.

use retrace_protocol::ErrorCode;

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
}

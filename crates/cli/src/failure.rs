//! A command's failure: an error with the exit code of the CLI contract (SPEC §11), and what
//! `--json` prints for it. Errors of the controller get their exit code and hint from `exit.rs`.

use std::process::ExitCode;

use retrace_protocol::ErrorCode;

use crate::exit::{exit_code, hint_for};

/// The result of a command: an exit code, or a failure.
pub type CmdResult = Result<ExitCode, Failure>;

/// An error with the exit code of the CLI contract (SPEC §11).
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    /// Exit 2.
    pub fn usage(msg: impl Into<String>) -> Failure {
        Failure::hinted(retrace_protocol::Error::new(ErrorCode::Usage, msg.into()), "")
    }

    /// An error of the controller, with a hint in the CLI's own words appended.
    pub fn hinted(e: retrace_protocol::Error, hint: &str) -> Failure {
        Failure {
            code: exit_code(e.code),
            error: anyhow::Error::new(Coded {
                error: e,
                hint: hint.to_string(),
                plan: None,
            }),
        }
    }

    /// A refused plan: with `--json`, printed as the failure's one document (SPEC §11).
    pub fn with_plan(self, plan: &impl serde::Serialize) -> Failure {
        let Failure { code, error } = self;
        let error = match error.downcast::<Coded>() {
            Ok(mut c) => {
                c.plan = serde_json::to_value(plan).ok();
                anyhow::Error::new(c)
            }
            Err(other) => other,
        };
        Failure { code, error }
    }

    /// The failure as `--json` prints it: `{ok: false, error: {code, message, details}}`, or a
    /// refused plan with `ok: false` and `error` (SPEC §11).
    pub fn json(&self, message: &str) -> serde_json::Value {
        let coded = self.error.chain().find_map(|e| e.downcast_ref::<Coded>());
        let code = match coded {
            Some(c) => c.error.code.as_str(),
            None => match self.code {
                2 => ErrorCode::Usage.as_str(),
                3 => ErrorCode::Refused.as_str(),
                4 => ErrorCode::ConfirmationRequired.as_str(),
                _ if self
                    .error
                    .chain()
                    .any(|e| e.downcast_ref::<std::io::Error>().is_some()) =>
                {
                    ErrorCode::Io.as_str()
                }
                _ => ErrorCode::Internal.as_str(),
            },
        };
        let error = serde_json::json!({
            "code": code,
            "message": message,
            "details": coded.and_then(|c| c.error.details.as_ref()),
        });
        match coded.and_then(|c| c.plan.clone()) {
            Some(serde_json::Value::Object(mut plan)) => {
                plan.insert("ok".to_string(), false.into());
                plan.insert("error".to_string(), error);
                serde_json::Value::Object(plan)
            }
            _ => serde_json::json!({ "ok": false, "error": error }),
        }
    }
}

/// An error of the controller (or a usage error of the CLI) inside a [`Failure`]: its code and
/// details for `--json`, the CLI's hint, and the plan a refused commit refused.
#[derive(Debug)]
pub struct Coded {
    error: retrace_protocol::Error,
    hint: String,
    plan: Option<serde_json::Value>,
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.error.message, self.hint)
    }
}

impl std::error::Error for Coded {}

impl From<retrace_protocol::Error> for Failure {
    fn from(e: retrace_protocol::Error) -> Failure {
        let hint = hint_for(&e);
        Failure::hinted(e, &hint)
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure { code: 1, error }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure {
            code: 1,
            error: e.into(),
        }
    }
}

//! What a tool call does, in one line: "Edit src/main.rs", "Run cargo test", for live calls and for
//! the calls of old session logs alike, so it never fails.

use std::sync::OnceLock;

use serde_json::Value;

use crate::registry::Registry;

/// A call's title and target, from its arguments (see [`crate::Tool::describe`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Title {
    /// One line saying what the call does ("Edit src/main.rs", "Run cargo test").
    pub title: String,
    /// The path or command it acts on, when the arguments name one.
    pub target: Option<String>,
}

impl Title {
    /// A title without a target.
    pub fn new(title: impl Into<String>) -> Title {
        Title {
            title: title.into(),
            target: None,
        }
    }

    /// `verb target`, acting on `target`.
    pub fn on(verb: &str, target: &str) -> Title {
        Title {
            title: format!("{verb} {target}"),
            target: Some(target.to_string()),
        }
    }
}

/// A call described: its title, target and arguments as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Described {
    /// One line saying what the call does.
    pub title: String,
    /// The path or command it acts on, when it has one.
    pub target: Option<String>,
    /// The arguments as JSON: the object the tool reads (`{}` for blank arguments, the object a
    /// JSON string held when the model double-encoded them), or the raw text as a JSON string
    /// when it is not JSON.
    pub arguments: Value,
}

/// Describes a call of the standard tool `tool` with the model's `arguments` text. Never fails:
/// an unknown tool or arguments that are not JSON get the tool's name as their title; missing or
/// mistyped fields get a title without them ("Edit a file").
pub fn describe(tool: &str, arguments: &str) -> Described {
    let arguments = arguments_value(arguments);
    let title = match (standard().get(tool), &arguments) {
        (Some(t), Value::Object(_) | Value::Null) => t.describe(&arguments),
        _ => Title::new(tool),
    };
    Described {
        title: title.title,
        target: title.target,
        arguments,
    }
}

/// The standard tools, made once.
fn standard() -> &'static Registry {
    static STANDARD: OnceLock<Registry> = OnceLock::new();
    STANDARD.get_or_init(Registry::standard)
}

/// The arguments text as JSON, as the tools would read it.
fn arguments_value(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(inner)) => match serde_json::from_str::<Value>(&inner) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(inner),
        },
        Ok(v) => v,
        Err(_) => Value::String(text.to_string()),
    }
}

/// The string field `name` of `args`, when it is a non-blank string.
pub(crate) fn field<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
}

/// The first non-blank line of `text`, trimmed, cut to `max` characters; `…` marks anything left
/// out (a cut, or more lines).
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    let more = lines.next().is_some();
    match first.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", first[..cut].trim_end()),
        None if more => format!("{first} …"),
        None => first.to_string(),
    }
}

/// How long a command or a pattern shown in a title may be, in characters.
pub(crate) const SHOWN_CHARS: usize = 80;

#[cfg(test)]
#[path = "describe_tests.rs"]
mod tests;

//! A tool call's title and target from its arguments.

use serde_json::Value;

/// What a call is, in one line.
pub(crate) struct Described {
    pub(crate) title: String,
    pub(crate) target: Option<String>,
    pub(crate) arguments: Value,
}

/// Describes a call of `tool` with the model's `arguments` text; never fails.
pub(crate) fn describe(tool: &str, arguments: &str) -> Described {
    let arguments = match serde_json::from_str::<Value>(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    }) {
        Ok(v) => v,
        Err(_) => Value::String(arguments.to_string()),
    };
    let field = |k: &str| arguments.get(k).and_then(Value::as_str).map(str::to_string);
    let (verb, target) = match tool {
        "edit_file" | "multi_edit" => ("Edit", field("path")),
        "write_file" => ("Write", field("path")),
        "delete_file" => ("Delete", field("path")),
        "read_file" => ("Read", field("path")),
        "list_dir" => ("List", field("path")),
        "move_file" => ("Move", field("to")),
        "bash" => ("Run", field("command")),
        "grep" => ("Search", field("pattern")),
        "glob" => ("Find", field("pattern")),
        _ => ("", None),
    };
    let title = match (&target, tool) {
        (Some(t), "move_file") => format!("Move {} → {t}", field("from").unwrap_or_default()),
        (Some(t), _) if !verb.is_empty() => format!("{verb} {t}"),
        _ => tool.to_string(),
    };
    Described {
        title,
        target,
        arguments,
    }
}

//! Reading a tool call's JSON arguments with messages that tell the model exactly what to fix.
//!
//! serde's derived errors say "invalid type: integer, expected a string" without naming the field,
//! which leaves a model guessing; these accessors name the field, the expected type and what was
//! given. Unknown fields are ignored (models add them; refusing would only cost a round trip).

use serde_json::{Map, Value};

use crate::error::{Result, ToolError};

/// The arguments of one call of `tool`.
pub(crate) struct Args<'v> {
    tool: &'static str,
    map: &'v Map<String, Value>,
}

/// Holds a re-parsed argument object when a model sent the arguments as a JSON string.
pub(crate) enum Parsed {
    /// The value was already an object.
    Borrowed,
    /// The value was a string holding an object.
    Owned(Value),
}

impl<'v> Args<'v> {
    /// Reads `value` as an argument object. A JSON string holding an object (some models
    /// double-encode) is accepted through `holder`.
    pub fn new(tool: &'static str, value: &'v Value, holder: &'v mut Parsed) -> Result<Args<'v>> {
        if let Value::String(s) = value {
            if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
                *holder = Parsed::Owned(v);
            }
        }
        let value = match holder {
            Parsed::Owned(v) => &*v,
            Parsed::Borrowed => value,
        };
        match value {
            Value::Object(map) => Ok(Args { tool, map }),
            Value::Null => Ok(Args {
                tool,
                map: empty_map(),
            }),
            other => Err(ToolError::args(
                tool,
                format!("the arguments must be a JSON object, got {}", kind(other)),
            )),
        }
    }

    /// A required string field.
    pub fn str(&self, field: &str) -> Result<&'v str> {
        match self.map.get(field) {
            Some(Value::String(s)) => Ok(s),
            None | Some(Value::Null) => Err(self.err(format!("`{field}` is required (a string)"))),
            Some(other) => Err(self.err(format!("`{field}` must be a string, got {}", kind(other)))),
        }
    }

    /// An optional string field.
    pub fn opt_str(&self, field: &str) -> Result<Option<&'v str>> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.err(format!("`{field}` must be a string, got {}", kind(other)))),
        }
    }

    /// An optional boolean field (`"true"`/`"false"` strings are accepted too).
    pub fn opt_bool(&self, field: &str) -> Result<Option<bool>> {
        bool_of(self.map.get(field))
            .map_err(|got| self.err(format!("`{field}` must be true or false, got {got}")))
    }

    /// An optional non-negative integer field (an integral number in a string is accepted too).
    pub fn opt_u64(&self, field: &str) -> Result<Option<u64>> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) => Ok(Some(v)),
                None => match n.as_f64() {
                    Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(Some(f as u64)),
                    _ => Err(self.err(format!("`{field}` must be a non-negative integer, got {n}"))),
                },
            },
            Some(Value::String(s)) => s
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| self.err(format!("`{field}` must be a non-negative integer, got \"{s}\""))),
            Some(other) => Err(self.err(format!(
                "`{field}` must be a non-negative integer, got {}",
                kind(other)
            ))),
        }
    }

    /// A required array field.
    pub fn array(&self, field: &str, what: &str) -> Result<&'v Vec<Value>> {
        match self.map.get(field) {
            Some(Value::Array(a)) => Ok(a),
            None | Some(Value::Null) => Err(self.err(format!("`{field}` is required ({what})"))),
            Some(other) => Err(self.err(format!("`{field}` must be {what}, got {}", kind(other)))),
        }
    }

    /// An [`ToolError::InvalidArguments`] of this tool.
    pub fn err(&self, message: impl Into<String>) -> ToolError {
        ToolError::args(self.tool, message)
    }
}

/// Reads an optional boolean; on error returns how the value looked.
pub(crate) fn bool_of(v: Option<&Value>) -> std::result::Result<Option<bool>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s == "true" => Ok(Some(true)),
        Some(Value::String(s)) if s == "false" => Ok(Some(false)),
        Some(other) => Err(kind(other)),
    }
}

/// How a JSON value looks, for messages.
pub(crate) fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            if short.len() < s.len() {
                format!("the string \"{short}…\"")
            } else {
                format!("the string \"{short}\"")
            }
        }
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// Parses the arguments of `tool` into `$args` (a macro because the holder must outlive them).
macro_rules! args {
    ($tool:expr, $value:expr, $holder:ident, $args:ident) => {
        let mut $holder = $crate::args::Parsed::Borrowed;
        let $args = $crate::args::Args::new($tool, $value, &mut $holder)?;
    };
}
pub(crate) use args;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: Value) -> Result<()> {
        args!("t", &v, h, a);
        a.str("path")?;
        a.opt_u64("offset")?;
        a.opt_bool("replace_all")?;
        Ok(())
    }

    #[test]
    fn messages_name_the_field() {
        let e = check(json!({})).unwrap_err().to_string();
        assert_eq!(e, "invalid arguments for t: `path` is required (a string)");
        let e = check(json!({"path": 3})).unwrap_err().to_string();
        assert!(e.contains("`path` must be a string, got the number 3"), "{e}");
        let e = check(json!({"path": "a", "offset": -1})).unwrap_err().to_string();
        assert!(e.contains("`offset` must be a non-negative integer"), "{e}");
        let e = check(json!({"path": "a", "replace_all": "yes"}))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`replace_all` must be true or false"), "{e}");
        let e = check(json!([1])).unwrap_err().to_string();
        assert!(e.contains("must be a JSON object, got an array"), "{e}");
    }

    #[test]
    fn lenient_forms() {
        check(json!({"path": "a", "offset": "5", "replace_all": "true"})).unwrap();
        check(json!({"path": "a", "offset": 5.0, "extra": 1})).unwrap();
        check(Value::String(r#"{"path": "a"}"#.into())).unwrap();
    }
}

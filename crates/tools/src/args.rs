//! Reading a tool call's JSON arguments into the tool's typed [`ToolArgs`], with messages that
//! tell the model exactly what to fix.
//!
//! serde_json's own errors say "invalid type: integer, expected a string" without naming the
//! field, which leaves a model guessing. This module is a small serde `Deserializer` over the
//! parsed JSON that knows which field it is reading: its messages name the field, what was expected
//! (taken from the tool's schema, so `edits` reads "an array of {old_string, new_string,
//! replace_all?} objects") and what was given. It is lenient where models are sloppy:
//!
//! - unknown fields are ignored (models add them; refusing would only cost a round trip);
//! - a field set to `null` counts as absent;
//! - `"true"`/`"false"` strings are booleans, integral numbers in strings or written `5.0` are
//!   integers;
//! - arguments (or an array's objects) sent as a JSON string holding an object are read as that
//!   object, and `null` arguments as `{}`.

use std::fmt;

use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, Visitor};
use serde_json::{Map, Value};

use crate::error::{Result, ToolError};

/// The typed arguments of one tool: the JSON schema the model sees, written beside the struct,
/// and the checks its types cannot express.
///
/// The struct derives `Deserialize` (no `flatten`, no `deny_unknown_fields`); its fields may be
/// `String`, `bool`, `u64`, an `Option` of one of these, or a `Vec` of such structs. Anything
/// else is refused at parse time as an unsupported argument type, which the tool's tests catch.
pub trait ToolArgs: DeserializeOwned + Send + Sync {
    /// The JSON schema of these arguments, as the model is told it. Messages about a missing field
    /// take the field's expected form from here.
    fn schema() -> Value;

    /// Refuses what the types allow but the tool does not (an empty pattern, a timeout out of
    /// range), with a message for the model that names the field. Runs right after parsing.
    fn check(&self) -> std::result::Result<(), String> {
        Ok(())
    }
}

/// Parses and checks the arguments of a call of `tool`.
pub(crate) fn parse<A: ToolArgs>(tool: &'static str, value: &Value) -> Result<A> {
    let schema = A::schema();
    let args = A::deserialize(Object {
        value,
        schema: &schema,
        prefix: String::new(),
    })
    .map_err(|e| ToolError::args(tool, e.message))?;
    args.check().map_err(|m| ToolError::args(tool, m))?;
    Ok(args)
}

/// What went wrong, worded for the model (or a missing field, worded once its schema is known).
#[derive(Debug)]
pub(crate) struct ArgError {
    message: String,
    missing: Option<&'static str>,
}

impl ArgError {
    fn new(message: String) -> ArgError {
        ArgError {
            message,
            missing: None,
        }
    }
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ArgError {}

impl de::Error for ArgError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        ArgError::new(msg.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        ArgError {
            message: format!("`{field}` is required"),
            missing: Some(field),
        }
    }
}

type Res<T> = std::result::Result<T, ArgError>;

/// An argument object (the whole call's, or one item of an array of objects).
struct Object<'a> {
    value: &'a Value,
    /// Its schema (`{"type": "object", "properties": …}`).
    schema: &'a Value,
    /// Put before every message (`edits[1]: `), empty at the top.
    prefix: String,
}

impl<'de> de::Deserializer<'de> for Object<'_> {
    type Error = ArgError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        let reparsed;
        let value = match self.value {
            Value::String(s) => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => {
                    reparsed = v;
                    &reparsed
                }
                _ => self.value,
            },
            v => v,
        };
        let map = match value {
            Value::Object(map) => map,
            Value::Null => empty_map(),
            other => {
                return Err(ArgError::new(format!(
                    "{}the arguments must be a JSON object, got {}",
                    self.prefix,
                    kind(other)
                )))
            }
        };
        let fields = Fields {
            iter: map.iter(),
            value: None,
            schema: self.schema,
            prefix: &self.prefix,
        };
        visitor.visit_map(fields).map_err(|e| match e.missing {
            Some(field) => ArgError::new(format!(
                "{}`{field}` is required ({})",
                self.prefix,
                what(property(self.schema, field))
            )),
            None => e,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier
        ignored_any
    }
}

/// The fields of an object, each read by a [`Field`].
struct Fields<'a> {
    iter: serde_json::map::Iter<'a>,
    value: Option<(&'a str, &'a Value)>,
    schema: &'a Value,
    prefix: &'a str,
}

impl<'de> de::MapAccess<'de> for Fields<'_> {
    type Error = ArgError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Res<Option<K::Value>> {
        let Some((key, value)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some((key.as_str(), value));
        seed.deserialize(key.as_str().into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Res<V::Value> {
        let Some((name, value)) = self.value.take() else {
            return Err(ArgError::new("a value was read before its key".into()));
        };
        seed.deserialize(Field {
            value,
            name,
            schema: property(self.schema, name),
            prefix: self.prefix,
        })
    }
}

/// The value of one named field.
struct Field<'a> {
    value: &'a Value,
    name: &'a str,
    /// The field's schema (`Value::Null` when the schema does not list it).
    schema: &'a Value,
    prefix: &'a str,
}

impl Field<'_> {
    /// "`name` must be …, got …", or "`name` is required (…)" when it is `null`.
    fn wrong(&self, default_what: &str) -> ArgError {
        let what = match what(self.schema) {
            w if w == UNKNOWN_FORM => default_what.to_string(),
            w => w,
        };
        let (prefix, name) = (self.prefix, self.name);
        ArgError::new(match self.value {
            Value::Null => format!("{prefix}`{name}` is required ({what})"),
            other => format!("{prefix}`{name}` must be {what}, got {}", kind(other)),
        })
    }
}

impl<'de> de::Deserializer<'de> for Field<'_> {
    type Error = ArgError;

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Res<V::Value> {
        Err(ArgError::new(format!(
            "{}`{}` cannot be read (unsupported argument type)",
            self.prefix, self.name
        )))
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        visitor.visit_unit()
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        match self.value {
            Value::String(s) => visitor.visit_str(s),
            _ => Err(self.wrong("a string")),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::String(s) if s == "true" => visitor.visit_bool(true),
            Value::String(s) if s == "false" => visitor.visit_bool(false),
            _ => Err(self.wrong("true or false")),
        }
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        let n = match self.value {
            Value::Number(n) => n.as_u64().or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f <= u64::MAX as f64)
                    .map(|f| f as u64)
            }),
            Value::String(s) => s.trim().parse::<u64>().ok(),
            _ => None,
        };
        match (n, self.value) {
            (Some(n), _) => visitor.visit_u64(n),
            (None, Value::Number(n)) => Err(ArgError::new(format!(
                "{}`{}` must be a non-negative integer, got {n}",
                self.prefix, self.name
            ))),
            (None, Value::String(s)) => Err(ArgError::new(format!(
                "{}`{}` must be a non-negative integer, got \"{s}\"",
                self.prefix, self.name
            ))),
            (None, _) => Err(self.wrong("a non-negative integer")),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Res<V::Value> {
        match self.value {
            Value::Array(items) => visitor.visit_seq(Items {
                iter: items.iter().enumerate(),
                name: self.name,
                schema: self.schema.get("items").unwrap_or(&Value::Null),
                prefix: self.prefix,
            }),
            _ => Err(self.wrong("an array")),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Res<V::Value> {
        de::Deserializer::deserialize_any(
            Object {
                value: self.value,
                schema: self.schema,
                prefix: format!("{}{}: ", self.prefix, self.name),
            },
            visitor,
        )
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i64 i128 u8 u16 u32 u128 f32 f64 char bytes byte_buf unit unit_struct
        newtype_struct tuple tuple_struct map enum identifier
    }
}

/// The objects of an array field, each read as an [`Object`] prefixed `name[i]: `.
struct Items<'a> {
    iter: std::iter::Enumerate<std::slice::Iter<'a, Value>>,
    name: &'a str,
    schema: &'a Value,
    prefix: &'a str,
}

impl<'de> de::SeqAccess<'de> for Items<'_> {
    type Error = ArgError;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Res<Option<T::Value>> {
        let Some((i, value)) = self.iter.next() else {
            return Ok(None);
        };
        seed.deserialize(Object {
            value,
            schema: self.schema,
            prefix: format!("{}{}[{i}]: ", self.prefix, self.name),
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// The schema of property `name` of an object schema (`Value::Null` when it has none).
fn property<'a>(schema: &'a Value, name: &str) -> &'a Value {
    schema
        .get("properties")
        .and_then(|p| p.get(name))
        .unwrap_or(&Value::Null)
}

/// What [`what`] says of a schema without a type.
const UNKNOWN_FORM: &str = "a value";

/// The expected form of a value, from its schema: "a string", "true or false", "an array of
/// {old_string, new_string, replace_all?} objects" (required fields first, optional ones with `?`).
pub(crate) fn what(schema: &Value) -> String {
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => "a string".into(),
        Some("boolean") => "true or false".into(),
        Some("integer") => "a non-negative integer".into(),
        Some("object") => "an object".into(),
        Some("array") => match schema.get("items") {
            Some(items) if items.get("properties").is_some() => {
                format!("an array of {{{}}} objects", field_list(items))
            }
            _ => "an array".into(),
        },
        _ => UNKNOWN_FORM.into(),
    }
}

/// `a, b, c?`: the required properties in their order, then the optional ones with `?`.
fn field_list(schema: &Value) -> String {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut names: Vec<String> = required.iter().map(|s| s.to_string()).collect();
    if let Some(Value::Object(props)) = schema.get("properties") {
        for name in props.keys() {
            if !required.contains(&name.as_str()) {
                names.push(format!("{name}?"));
            }
        }
    }
    names.join(", ")
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

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;

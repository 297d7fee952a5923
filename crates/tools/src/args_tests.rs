use serde::Deserialize;
use serde_json::json;

use super::*;

#[derive(Debug, Deserialize)]
struct Probe {
    path: String,
    offset: Option<u64>,
    replace_all: Option<bool>,
    items: Option<Vec<Item>>,
}

#[derive(Debug, Deserialize)]
struct Item {
    #[allow(dead_code)]
    old: String,
    #[allow(dead_code)]
    flag: Option<bool>,
}

impl ToolArgs for Probe {
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer"},
                "replace_all": {"type": "boolean"},
                "items": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"flag": {"type": "boolean"}, "old": {"type": "string"}},
                    "required": ["old"]
                }}
            },
            "required": ["path"]
        })
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.path.is_empty() {
            return Err("`path` is empty".into());
        }
        Ok(())
    }
}

fn check(v: Value) -> Result<Probe> {
    parse::<Probe>("t", &v)
}

fn msg(v: Value) -> String {
    check(v).unwrap_err().to_string()
}

#[test]
fn messages_name_the_field() {
    assert_eq!(
        msg(json!({})),
        "invalid arguments for t: `path` is required (a string)"
    );
    assert_eq!(
        msg(json!({"path": null})),
        "invalid arguments for t: `path` is required (a string)"
    );
    assert!(msg(json!({"path": 3})).contains("`path` must be a string, got the number 3"));
    let e = msg(json!({"path": "a", "offset": -1}));
    assert!(
        e.contains("`offset` must be a non-negative integer, got -1"),
        "{e}"
    );
    let e = msg(json!({"path": "a", "offset": "soon"}));
    assert!(
        e.contains("`offset` must be a non-negative integer, got \"soon\""),
        "{e}"
    );
    let e = msg(json!({"path": "a", "offset": [1]}));
    assert!(
        e.contains("`offset` must be a non-negative integer, got an array"),
        "{e}"
    );
    let e = msg(json!({"path": "a", "replace_all": "yes"}));
    assert!(
        e.contains("`replace_all` must be true or false, got the string \"yes\""),
        "{e}"
    );
    let e = msg(json!([1]));
    assert!(e.contains("must be a JSON object, got an array"), "{e}");
    let e = msg(json!({"path": ""}));
    assert_eq!(e, "invalid arguments for t: `path` is empty");
}

#[test]
fn array_items_are_named_by_index() {
    let e = msg(json!({"path": "a", "items": [{"old": "x"}, {"flag": true}]}));
    assert_eq!(
        e,
        "invalid arguments for t: items[1]: `old` is required (a string)"
    );
    let e = msg(json!({"path": "a", "items": [{"old": "x", "flag": 2}]}));
    assert_eq!(
        e,
        "invalid arguments for t: items[0]: `flag` must be true or false, got the number 2"
    );
    let e = msg(json!({"path": "a", "items": [7]}));
    assert!(
        e.contains("items[0]: the arguments must be a JSON object, got the number 7"),
        "{e}"
    );
    let e = msg(json!({"path": "a", "items": "x"}));
    assert_eq!(
        e,
        "invalid arguments for t: `items` must be an array of {old, flag?} objects, got the string \"x\""
    );
}

#[test]
fn lenient_forms() {
    let p = check(json!({"path": "a", "offset": "5", "replace_all": "true"})).unwrap();
    assert_eq!((p.offset, p.replace_all), (Some(5), Some(true)));
    let p = check(json!({"path": "a", "offset": 5.0, "extra": {"any": [1]}})).unwrap();
    assert_eq!(p.offset, Some(5));
    let p = check(Value::String(r#"{"path": "a"}"#.into())).unwrap();
    assert_eq!(p.path, "a");
    let p = check(json!({"path": "a", "offset": null, "items": [r#"{"old": "x"}"#]})).unwrap();
    assert_eq!(p.offset, None);
    assert_eq!(p.items.map(|i| i.len()), Some(1));
    assert_eq!(
        msg(Value::Null),
        "invalid arguments for t: `path` is required (a string)"
    );
}

#[test]
fn forms_from_the_schema() {
    assert_eq!(what(&json!({"type": "string"})), "a string");
    assert_eq!(what(&json!({"type": "boolean"})), "true or false");
    assert_eq!(what(&json!({"type": "integer"})), "a non-negative integer");
    assert_eq!(what(&json!({"type": "array"})), "an array");
    assert_eq!(what(&Value::Null), "a value");
}

//! The script model (`--model script:FILE`, SPEC §11.2).

use retrace_model::{open_model, Delta, ModelError, ModelOptions, ModelSpec, ScriptModel};

use crate::{ask, run};

const SCRIPT: &str = r#"{"responses": [
  {"content": "Writing.", "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi\n"}}]},
  {"content": "done"}
]}"#;

#[tokio::test]
async fn responses_are_replayed_in_order_across_turns_then_run_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.json");
    std::fs::write(&path, SCRIPT).unwrap();
    let spec = ModelSpec::parse(&format!("script:{}", path.display())).unwrap();
    let mut model = open_model(&spec, &ModelOptions::default(), &|_: &str| None).unwrap();
    assert_eq!(model.describe(), format!("script:{}", path.display()));

    let (first, deltas) = run(model.as_mut(), &ask("turn 1")).await;
    let first = first.unwrap();
    assert_eq!(first.content, "Writing.");
    assert_eq!(first.tool_calls[0].id, "call_1");
    assert_eq!(first.tool_calls[0].name, "write_file");
    assert_eq!(
        first.tool_calls[0].arguments,
        r#"{"content":"hi\n","path":"a.txt"}"#
    );
    assert_eq!(deltas[0], Delta::Content("Writing.".into()));
    assert!(matches!(deltas[1], Delta::ToolCallStart { index: 0, .. }));

    // A new turn (a new prompt) continues where the script left off.
    let (second, _) = run(model.as_mut(), &ask("turn 2")).await;
    let second = second.unwrap();
    assert_eq!(second.content, "done");
    assert!(second.tool_calls.is_empty());
    assert_eq!(second.finish_reason.as_deref(), Some("stop"));

    let (third, _) = run(model.as_mut(), &ask("turn 3")).await;
    let err = third.unwrap_err();
    assert!(matches!(err, ModelError::ScriptExhausted { used: 2, .. }));
    assert_eq!(
        err.to_string(),
        format!(
            "script `{}` has no response left: all 2 were used; add more to its `responses`",
            path.display()
        )
    );
}

#[test]
fn a_bad_script_file_is_refused_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, r#"{"responses": [{"content": 3}]}"#).unwrap();
    let err = ScriptModel::load(&path).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "bad script `{}`: invalid type: integer `3`",
            path.display()
        )),
        "{msg}"
    );
    assert_eq!(
        ScriptModel::parse("x", r#"{"responses": []}"#)
            .unwrap()
            .remaining(),
        0
    );
}

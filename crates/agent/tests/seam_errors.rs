//! The seam's typed errors: a refusal is the call's error for the model and the turn goes on; a
//! fatal error ends the turn with its text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use retrace_agent::{
    Agent, AgentConfig, CaptureSeam, Captured, DenyAll, SeamError, ShellCoverage, ToolResult, TurnEnd,
    TurnSink,
};
use retrace_model::{CancellationToken, ChatMessage, ScriptModel};
use retrace_protocol::{Event, TokenUsage, ToolStatus};
use retrace_tools::{Preview, Workspace};

/// A seam whose `before` answers with `error`.
struct Seam(Option<SeamError>);

impl CaptureSeam for Seam {
    fn before(&mut self, _tool: &str, _preview: &Preview) -> Result<Captured, SeamError> {
        match &self.0 {
            Some(e) => Err(e.clone()),
            None => Ok(Captured::default()),
        }
    }
    fn after(&mut self, _tool: &str, _preview: &Preview, _ok: bool) -> Result<(), SeamError> {
        Ok(())
    }
    fn shell(&mut self, _command: &str) -> Result<ShellCoverage, SeamError> {
        Ok(ShellCoverage::Gap)
    }
}

/// A sink that keeps the tool results, or fails to write them when asked.
#[derive(Default)]
struct Sink {
    results: Vec<ToolResult>,
    fail_result: bool,
}

impl TurnSink for Sink {
    fn event(&mut self, _event: Event) {}
    fn message(&mut self, _m: &ChatMessage) -> Result<(), SeamError> {
        Ok(())
    }
    fn assistant(&mut self, _m: &ChatMessage, _u: Option<TokenUsage>) -> Result<(), SeamError> {
        Ok(())
    }
    fn tool_result(&mut self, _id: &str, result: &ToolResult) -> Result<(), SeamError> {
        if self.fail_result {
            return Err(SeamError::Fatal(
                "cannot write the conversation log: disk full".into(),
            ));
        }
        self.results.push(result.clone());
        Ok(())
    }
}

fn agent(dir: &std::path::Path) -> Agent {
    let script = r#"{"responses": [
        {"content": "", "tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}]},
        {"content": "done"}
    ]}"#;
    let model = ScriptModel::parse(dir.join("script.json"), script).unwrap();
    Agent::new(
        Workspace::new(dir).unwrap(),
        Box::new(model),
        AgentConfig::default(),
    )
}

fn run(seam: &mut Seam, sink: &mut Sink) -> (TurnEnd, bool) {
    let dir = tempfile::tempdir().unwrap();
    let mut a = agent(dir.path());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = rt.block_on(a.run_turn(0, Vec::new(), seam, sink, &DenyAll, &CancellationToken::new()));
    (report.end, dir.path().join("a.txt").exists())
}

#[test]
fn a_refused_capture_fails_the_call_and_the_turn_goes_on() {
    let mut sink = Sink::default();
    let (end, written) = run(&mut Seam(Some(SeamError::Refuse("no space".into()))), &mut sink);
    assert_eq!(end, TurnEnd::Finished);
    assert!(!written, "nothing is written when the before-image is refused");
    assert_eq!(sink.results.len(), 1);
    assert_eq!(sink.results[0].status, ToolStatus::Failed);
    assert!(
        sink.results[0].content.contains("edit refused"),
        "{}",
        sink.results[0].content
    );
}

#[test]
fn a_fatal_capture_ends_the_turn_unrun() {
    let mut sink = Sink::default();
    let (end, written) = run(
        &mut Seam(Some(SeamError::Fatal("the lease was lost".into()))),
        &mut sink,
    );
    assert_eq!(end, TurnEnd::Failed("the lease was lost".into()));
    assert!(!written);
    assert!(sink.results.is_empty());
}

#[test]
fn a_log_that_cannot_be_written_ends_the_turn_with_its_words() {
    let mut sink = Sink {
        fail_result: true,
        ..Sink::default()
    };
    let (end, _) = run(&mut Seam(None), &mut sink);
    assert_eq!(
        end,
        TurnEnd::Failed("cannot write the conversation log: disk full".into())
    );
}

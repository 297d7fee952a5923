//! The SSE decoder over the corpus in `tests/corpus/sse/` — the stable-toolchain stand-in for the
//! `sse_decoder` fuzz target (`fuzz/`), which checks the same property on random input: cutting a
//! stream anywhere, into any number of pieces, gives the events of decoding it whole. Then the named
//! files' events are assembled and checked against what they were written to show.

use std::path::PathBuf;

use retrace_model::sse::{decode_all, decode_chunks, SseEvent};
use retrace_model::{ChatResponse, ModelError, StreamAssembler};

fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/sse");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the corpus is missing from {}", dir.display());
    files
}

#[test]
fn every_split_of_every_corpus_file_decodes_like_the_whole() {
    for (name, bytes) in corpus() {
        let whole = decode_all(&bytes);
        for cut in 0..=bytes.len() {
            let split = decode_chunks([&bytes[..cut], &bytes[cut..]]);
            assert_eq!(split, whole, "{name}: cut at {cut}");
        }
        assert_eq!(
            decode_chunks(bytes.chunks(1)),
            whole,
            "{name}: one byte at a time"
        );
        if bytes.len() <= 256 {
            for i in 0..=bytes.len() {
                for j in i..=bytes.len() {
                    let split = decode_chunks([&bytes[..i], &bytes[i..j], &bytes[j..]]);
                    assert_eq!(split, whole, "{name}: cuts at {i} and {j}");
                }
            }
        }
    }
}

/// Assembles a file's events the way the client does.
fn assemble(events: &[SseEvent]) -> Result<(bool, ChatResponse), ModelError> {
    let mut a = StreamAssembler::new();
    for e in events {
        a.push_data(&e.data)?;
    }
    Ok((a.is_complete(), a.into_response()))
}

#[test]
fn corpus_files_show_what_they_were_written_to_show() {
    let files = corpus();
    let get = |name: &str| {
        let bytes = &files.iter().find(|(n, _)| n == name).unwrap().1;
        decode_all(bytes)
    };
    let ok = |name: &str| assemble(&get(name)).unwrap();

    let (complete, r) = ok("basic.sse");
    assert!(complete);
    assert_eq!(r.content, "Hello, world");
    assert_eq!(ok("crlf_keepalive.sse").1.content, "a");
    assert_eq!(ok("cr_only.sse").1.content, "cr");
    assert_eq!(ok("multiline_data.sse").1.finish_reason.as_deref(), Some("stop"));
    assert_eq!(ok("multiline_data.sse").1.content, "multi");

    let (_, r) = ok("utf8_reasoning.sse");
    assert_eq!(r.content, "h\u{e9}llo \u{4e16}\u{754c} \u{1f389}");
    assert_eq!(
        r.reasoning.as_deref(),
        Some("\u{601d}\u{8003}\u{4e2d}\u{2026} \u{1f914}")
    );
    assert_eq!(r.usage.unwrap().total_tokens, 8);

    let (_, r) = ok("tool_calls_interleaved.sse");
    assert_eq!(r.tool_calls.len(), 2);
    let args: serde_json::Value = serde_json::from_str(&r.tool_calls[0].arguments).unwrap();
    assert_eq!(args["path"], "\u{e4}.txt");
    assert_eq!(r.tool_calls[1].arguments, r#"{"from": "a", "to": "b"}"#);

    let events = get("bom_and_fields.sse");
    assert_eq!(events.len(), 2);
    assert_eq!(
        (events[0].event.as_deref(), events[0].id.as_deref()),
        (Some("message"), Some("1"))
    );
    assert_eq!(events[1].id.as_deref(), Some("1"), "an id with NUL is ignored");
    assert_eq!(ok("bom_and_fields.sse").1.content, "x");

    let (complete, r) = ok("invalid_utf8.sse");
    assert!(!complete);
    assert_eq!(r.content, "a\u{fffd}\u{fffd}b\u{fffd}");

    let (complete, r) = ok("no_trailing_blank_line.sse");
    assert!(complete, "an event missing only its blank line still counts");
    assert_eq!(r.content, "end");

    let (complete, r) = ok("truncated.sse");
    assert!(!complete, "a cut-off last line is dropped");
    assert_eq!(r.content, "cut");

    assert_eq!(get("empty_and_blank.sse").len(), 2);
    assert!(!ok("empty_and_blank.sse").0);

    let err = assemble(&get("error_event.sse")).unwrap_err();
    assert_eq!(err.to_string(), "the model server reported an error: overloaded");
}

//! Server-sent events on a real socket: framing, resume after a dropped connection with nothing
//! missed, two subscribers seeing one stream, `lagged`.

use std::time::Duration;

use serde_json::{json, Value};

use crate::http::{Frame, Live, SseReader};
use crate::support::writes;

async fn subscribe(live: &Live, id: &str, last: Option<&str>) -> SseReader {
    let mut req = live.get(&format!("/api/sessions/{id}/events"));
    if let Some(l) = last {
        req = req.header("last-event-id", l);
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status().as_u16(), 200);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));
    SseReader::new(res)
}

async fn send(live: &Live, id: &str, prompt: &str) {
    let (s, v) =
        Live::json(live.post(&format!("/api/sessions/{id}/messages"), json!({"prompt": prompt}))).await;
    assert_eq!(s, 202, "{v}");
}

fn seqs(frames: &[Frame]) -> Vec<u64> {
    frames
        .iter()
        .map(|f| f.id.as_ref().unwrap().parse().unwrap())
        .collect()
}

fn check_framing(frames: &[Frame]) {
    for f in frames {
        let v: Value = serde_json::from_str(&f.data).unwrap();
        assert_eq!(v["type"].as_str(), f.event.as_deref(), "{f:?}");
    }
    let s = seqs(frames);
    assert!(
        s.windows(2).all(|w| w[1] == w[0] + 1),
        "numbers have a gap: {s:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_resumes_from_last_event_id_with_nothing_missed() {
    let mut script = writes("a.txt", "1\n");
    script.extend(writes("b.txt", "2\n"));
    let live = Live::start(script).await;
    let id = live.create().await;

    // Everything, from one connection, as the reference.
    let mut whole = subscribe(&live, &id, None).await;
    let mut first = subscribe(&live, &id, None).await;
    send(&live, &id, "one").await;
    let mut seen = vec![];
    for _ in 0..3 {
        seen.push(first.next().await.unwrap());
    }
    assert_eq!(seen[0].event.as_deref(), Some("turn_started"));
    drop(first); // the connection drops mid-turn
    let reference_one = whole.until_turn_finished().await;
    // The second turn runs while nobody is connected on the dropped side.
    send(&live, &id, "two").await;
    let reference_two = whole.until_turn_finished().await;

    let last = seen.last().unwrap().id.clone().unwrap();
    let mut resumed = subscribe(&live, &id, Some(&last)).await;
    let mut rest = resumed.until_turn_finished().await;
    rest.extend(resumed.until_turn_finished().await);
    let mut got = seen.clone();
    got.extend(rest);
    let mut want = reference_one.clone();
    want.extend(reference_two);
    assert_eq!(got, want);
    check_framing(&got);

    // `?after=` resumes the same way.
    let res = live
        .get(&format!("/api/sessions/{id}/events?after={last}"))
        .send()
        .await
        .unwrap();
    let mut by_query = SseReader::new(res);
    assert_eq!(by_query.next().await.unwrap(), got[3]);
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_subscribers_see_the_same_stream() {
    let live = Live::start(writes("a.txt", "1\n")).await;
    let id = live.create().await;
    let mut a = subscribe(&live, &id, None).await;
    let mut b = subscribe(&live, &id, None).await;
    send(&live, &id, "one").await;
    let fa = a.until_turn_finished().await;
    let fb = b.until_turn_finished().await;
    assert_eq!(fa, fb);
    check_framing(&fa);
    let types: Vec<_> = fa.iter().map(|f| f.event.clone().unwrap()).collect();
    for t in [
        "turn_started",
        "tool_call",
        "checkpoint_captured",
        "tool_result",
        "turn_finished",
    ] {
        assert!(types.iter().any(|x| x == t), "{t} missing from {types:?}");
    }
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_before_the_buffer_says_lagged_then_streams() {
    let live = Live::start(writes("a.txt", "1\n")).await;
    let id = live.create().await;
    let mut s = subscribe(&live, &id, Some("1")).await;
    let lag = s.next().await.unwrap();
    assert_eq!(lag.event.as_deref(), Some("lagged"));
    let next: u64 = serde_json::from_str::<Value>(&lag.data).unwrap()["next_seq"]
        .as_u64()
        .unwrap();
    assert_eq!(lag.id, Some((next - 1).to_string()));
    send(&live, &id, "one").await;
    let frames = s.until_turn_finished().await;
    assert_eq!(seqs(&frames)[0], next);
    live.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_server_ends_the_streams() {
    let live = Live::start(vec![]).await;
    let id = live.create().await;
    let mut s = subscribe(&live, &id, None).await;
    let stopped = tokio::spawn(live.stop());
    let end = tokio::time::timeout(Duration::from_secs(20), s.next())
        .await
        .unwrap();
    assert_eq!(end, None);
    stopped.await.unwrap();
}

/// Replaces each message id (a UUID: 8-4-4-4-12 hex digits) with `<mN>`, numbered in order of
/// first appearance, so the pinned stream keeps which items share an id.
fn redact_ids(text: &str, seen: &mut Vec<String>) -> String {
    let is_id = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_hexdigit(),
            })
    };
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if i + 36 <= bytes.len() && is_id(&bytes[i..i + 36]) {
            let id = &text[i..i + 36];
            let n = match seen.iter().position(|s| s == id) {
                Some(n) => n,
                None => {
                    seen.push(id.to_string());
                    seen.len() - 1
                }
            };
            out.push_str(&format!("<m{n}>"));
            i += 36;
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The wire format of one turn's stream, pinned for the web UI: numbers relative to the first,
/// the session id and message ids redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_of_a_turn_as_the_page_reads_it() {
    let live = Live::start(writes("a.txt", "hi\n")).await;
    let id = live.create().await;
    let mut s = subscribe(&live, &id, None).await;
    send(&live, &id, "write a.txt").await;
    let frames = s.until_turn_finished().await;
    let first = seqs(&frames)[0];
    let mut text = String::new();
    let mut ids = Vec::new();
    for (f, seq) in frames.iter().zip(seqs(&frames)) {
        let data = redact_ids(&f.data.replace(&id, "<session>"), &mut ids);
        text.push_str(&format!(
            "id: <first>+{}\nevent: {}\ndata: {data}\n\n",
            seq - first,
            f.event.as_deref().unwrap()
        ));
    }
    insta::assert_snapshot!(text);
    live.stop().await;
}

/// `GET /api/sessions/{id}?include=items` is a snapshot: its items, then the events numbered after
/// its `last_event_seq`, give the items of a later snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_and_the_events_after_it_give_the_next_snapshot() {
    let mut script = writes("a.txt", "1\n");
    script.extend(writes("a.txt", "2\n"));
    let live = Live::start(script).await;
    let id = live.create().await;
    send(&live, &id, "one").await;
    let mut s = subscribe(&live, &id, None).await;
    s.until_turn_finished().await;
    let (status, first) = Live::json(live.get(&format!("/api/sessions/{id}?include=items"))).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["status"]["session_id"], json!(id));
    let seq = first["last_event_seq"].as_u64().unwrap();
    let mut items = first["items"].as_array().unwrap().clone();
    assert_eq!(items[0]["kind"], "user_prompt");
    assert_eq!(items[1]["kind"], "checkpoint");
    assert_eq!(items[1]["files"], json!(["a.txt"]));

    let mut after = subscribe(&live, &id, Some(&seq.to_string())).await;
    send(&live, &id, "two").await;
    for f in after.until_turn_finished().await {
        retrace_testkit::items::apply_item_event(&mut items, &serde_json::from_str(&f.data).unwrap());
    }
    let (_, second) = Live::json(live.get(&format!("/api/sessions/{id}?include=items"))).await;
    assert_eq!(Value::Array(items), second["items"]);
    let (status, bad) = Live::json(live.get(&format!("/api/sessions/{id}?include=everything"))).await;
    assert_eq!(status, 400, "{bad}");
    live.stop().await;
}

/// The session's tally goes out as a `usage` event after each counted request, and in the
/// snapshot: the figures and the words every status line shows (a script costs nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tally_is_an_event_and_in_the_snapshot() {
    let live = Live::start(vec![
        json!({"content": "counted", "usage": {"prompt_tokens": 1200, "completion_tokens": 300}}),
    ])
    .await;
    let id = live.create().await;
    let mut s = subscribe(&live, &id, None).await;
    send(&live, &id, "one").await;
    let frames = s.until_turn_finished().await;
    check_framing(&frames);
    let usage = frames
        .iter()
        .find(|f| f.event.as_deref() == Some("usage"))
        .map(|f| serde_json::from_str::<Value>(&f.data).unwrap()["usage"].clone())
        .unwrap_or_else(|| panic!("no usage event: {frames:?}"));
    assert_eq!(
        (
            &usage["input_tokens"],
            &usage["output_tokens"],
            &usage["cost_usd"]
        ),
        (&json!(1200), &json!(300), &json!(0.0)),
        "{usage}"
    );
    assert_eq!(usage["context_tokens"], 1500, "{usage}");
    let says = usage["says"].as_array().unwrap();
    assert_eq!(says.len(), 3, "{usage}");
    assert!(says[0].as_str().unwrap().ends_with("% context"), "{usage}");
    assert_eq!(
        (&says[1], &says[2]),
        (&json!("1.2k in 300 out"), &json!("$0.0000"))
    );
    let (_, snap) = Live::json(live.get(&format!("/api/sessions/{id}?include=items"))).await;
    assert_eq!(snap["usage"], usage, "{snap}");
    live.stop().await;
}

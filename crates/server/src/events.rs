//! `GET /api/sessions/{id}/events`: the session's events as server-sent events. Each event is
//! framed as `id: SEQ`, `event: TYPE` (the `type` tag of `protocol::Event`) and `data: JSON` (the
//! event itself). A client that reconnects with `Last-Event-ID` (or `?after=SEQ`) gets every event
//! after that number from the controller's replay buffer, then the live stream; when the buffer
//! no longer reaches back, or the client fell too far behind, it gets `event: lagged` with
//! `data: {"next_seq": N}` (and `id: N-1`, so a reconnect goes on from there) and must re-read
//! what it shows. A comment is sent every [`KEEP_ALIVE`] so proxies and browsers keep the
//! connection. The stream ends when the session closes (the server stops).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use retrace_control::Subscription;
use retrace_protocol::{Delivery, Event};

use crate::api::params;
use crate::error::ApiError;
use crate::params::Param;
use crate::registry::Registry;

/// How often a keep-alive comment is sent on an idle stream.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// The SSE `event:` name of an event: its serde `type` tag.
pub fn event_type(event: &Event) -> String {
    serde_json::to_value(event)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_else(|| "event".to_string())
}

/// One delivery as an SSE frame.
pub fn frame(delivery: &Delivery) -> SseEvent {
    match delivery {
        Delivery::Event(n) => {
            let data = serde_json::to_string(&n.event).unwrap_or_else(|_| "{}".to_string());
            SseEvent::default()
                .id(n.seq.to_string())
                .event(event_type(&n.event))
                .data(data)
        }
        Delivery::Lagged { next_seq } => SseEvent::default()
            .id(next_seq.saturating_sub(1).to_string())
            .event("lagged")
            .data(format!("{{\"next_seq\":{next_seq}}}")),
    }
}

/// Where to resume: `Last-Event-ID` first, else `?after=`.
fn resume_after(headers: &HeaderMap, query: Option<&String>) -> Result<Option<u64>, ApiError> {
    let header = headers
        .get("last-event-id")
        .map(|v| v.to_str().unwrap_or("").to_string());
    let Some(text) = header.or_else(|| query.cloned()) else {
        return Ok(None);
    };
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<u64>().map(Some).map_err(|_| {
        ApiError::usage(format!(
            "`{text}` is not an event number (Last-Event-ID or after)"
        ))
    })
}

pub(crate) async fn events(
    State(r): State<Arc<Registry>>,
    Param(id): Param<String>,
    headers: HeaderMap,
    q: Result<
        axum::extract::Query<std::collections::HashMap<String, String>>,
        axum::extract::rejection::QueryRejection,
    >,
) -> Result<Response, ApiError> {
    let q = params(q, &["after"])?;
    let after = resume_after(&headers, q.get("after"))?;
    let sub = r.get(&id).await?.subscribe(after);
    Ok(Sse::new(deliveries(sub))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}

fn deliveries(sub: Subscription) -> impl futures_util::Stream<Item = Result<SseEvent, Infallible>> {
    stream::unfold(sub, |mut sub| async move {
        let d = sub.recv().await?;
        Some((Ok(frame(&d)), sub))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::Numbered;

    #[test]
    fn frames_carry_the_number_the_type_and_the_json() {
        let d = Delivery::Event(Numbered {
            seq: 42,
            event: Event::AssistantDelta {
                item_id: None,
                text: "a\nb".into(),
            },
        });
        let s = format!("{:?}", frame(&d));
        assert!(s.contains("42"), "{s}");
        assert!(s.contains("assistant_delta"), "{s}");
        let lag = format!("{:?}", frame(&Delivery::Lagged { next_seq: 7 }));
        assert!(lag.contains("lagged") && lag.contains("next_seq"), "{lag}");
    }

    #[test]
    fn resume_reads_the_header_before_the_query() {
        let mut h = HeaderMap::new();
        assert_eq!(resume_after(&h, None).unwrap(), None);
        assert_eq!(resume_after(&h, Some(&"5".to_string())).unwrap(), Some(5));
        h.insert("last-event-id", "9".parse().unwrap());
        assert_eq!(resume_after(&h, Some(&"5".to_string())).unwrap(), Some(9));
        h.insert("last-event-id", "x".parse().unwrap());
        assert!(resume_after(&h, None).is_err());
    }
}

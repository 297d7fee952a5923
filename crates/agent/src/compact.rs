//! Compaction inside a turn: the model summarizes the turns before this one, the sink makes the
//! summary head, and the turn goes on from the summary plus what it did so far.

use retrace_model::{CancellationToken, ChatMessage, ChatRequest, Delta, ModelError};
use retrace_protocol::Event;

use crate::budget::{history_tokens, request_tokens};
use crate::run::{Agent, TurnEnd};
use crate::seam::TurnSink;

/// Why a compaction is tried: the request's size and what it is made of.
pub(crate) struct Why<'a> {
    /// The request's size, in tokens (reported, or estimated).
    pub(crate) before: u64,
    /// The estimated tokens of the system prompt and the tools.
    pub(crate) fixed: u64,
    /// The conversation the request is built from.
    pub(crate) history: &'a [ChatMessage],
    /// What to tell the user.
    pub(crate) reason: &'a str,
}

impl Agent {
    /// Compacts the conversation of turn `turn` because of `why`. `Ok(Some(history))`: compacted, go on from `history`; `Ok(None)`: not possible
    /// now (a notice said why, unless the sink cannot compact at all); `Err`: the turn was
    /// cancelled meanwhile.
    pub(crate) async fn compact(
        &mut self,
        turn: u64,
        sink: &mut dyn TurnSink,
        cancel: &CancellationToken,
        why: Why<'_>,
    ) -> Result<Option<Vec<ChatMessage>>, TurnEnd> {
        let notice =
            |sink: &mut dyn TurnSink, message: String| sink.event(Event::Notice { message, retry: None });
        let source = match sink.compaction_source(self.budget().threshold()) {
            None => return Ok(None),
            Some(Err(e)) => {
                notice(sink, format!("{}, but it cannot be compacted: {e}", why.reason));
                return Ok(None);
            }
            Some(Ok(s)) => s,
        };
        // What folding would save, against the whole conversation (both estimated alike): not
        // worth a model request and a new head when the folded turns are under a tenth of it,
        // that is when the bulk is the turn running now.
        let folded = history_tokens(&source[..source.len().saturating_sub(1)]);
        if folded < history_tokens(why.history) / 10 {
            notice(
                sink,
                format!(
                    "{}, but the turns before this one are only about {folded} tokens: compacting would not help, so it was not done",
                    why.reason
                ),
            );
            return Ok(None);
        }
        notice(
            sink,
            format!(
                "{}: summarizing the turns before this one (the full conversation stays a version)",
                why.reason
            ),
        );
        let request = ChatRequest {
            messages: source,
            tools: Vec::new(),
        };
        let response = {
            let mut on_delta = |d: Delta| {
                if let Delta::Retry { message, notice } = d {
                    sink.event(Event::Notice {
                        message,
                        retry: Some(notice),
                    });
                }
            };
            self.model.complete(&request, &mut on_delta, cancel).await
        };
        let summary = match response {
            Ok(r) => r.content.trim().to_string(),
            Err(ModelError::Cancelled) => return Err(TurnEnd::Cancelled),
            Err(e) => {
                notice(
                    sink,
                    format!("the conversation could not be compacted: the model failed: {e}"),
                );
                return Ok(None);
            }
        };
        if cancel.is_cancelled() {
            return Err(TurnEnd::Cancelled);
        }
        if summary.is_empty() {
            notice(
                sink,
                "the conversation could not be compacted: the model returned an empty summary".to_string(),
            );
            return Ok(None);
        }
        let made = match sink.compacted(summary) {
            Ok(c) => c,
            Err(e) => {
                notice(sink, format!("the conversation could not be compacted: {e}"));
                return Ok(None);
            }
        };
        let history = crate::history::well_formed(made.history);
        self.counted = None;
        let after = request_tokens(why.fixed, &history, None);
        sink.event(Event::Compacted {
            head_id: made.head_id,
            from_head: made.from_head,
            turn,
            automatic: true,
            before_tokens: why.before,
            after_tokens: after,
        });
        Ok(Some(history))
    }
}

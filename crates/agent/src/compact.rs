//! Compaction inside a turn: the model summarizes the turns before this one, the sink makes the
//! summary head, and the turn goes on from the summary plus what it did so far.

use retrace_model::{CancellationToken, ChatMessage, ChatRequest, Delta, ModelError};
use retrace_protocol::Event;

use crate::budget::{history_tokens, request_tokens};
use crate::run::{Agent, TurnEnd};
use crate::seam::{SeamError, TurnSink};

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
            Some(Err(SeamError::Fatal(e))) => return Err(TurnEnd::Failed(e)),
            Some(Err(SeamError::Refuse(e))) => {
                notice(sink, format!("{}, but it cannot be compacted: {e}", why.reason));
                return Ok(None);
            }
            Some(Ok(s)) => s,
        };
        // What folding would save, against the whole conversation (both estimated alike): not
        // worth a model request and a new head when the folded turns are under a tenth of it,
        // that is when the bulk is the turn running now. Measured on the conversation itself:
        // `source` is cut to fit the window, so it says nothing of how much the turns hold.
        let folded = history_tokens(&why.history[..turn_start(why.history)]);
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
        let (summary, usage) = match response {
            Ok(r) => (r.content.trim().to_string(), r.usage),
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
        // A summary that is not shorter than what it replaces makes nothing fit: keep the
        // conversation as it is (no new head).
        let summary_tokens = history_tokens(&[ChatMessage::user(summary.clone())]);
        if summary_tokens >= folded {
            notice(
                sink,
                format!(
                    "the conversation was not compacted: the summary (about {summary_tokens} tokens) is not shorter than the turns it would replace (about {folded} tokens)"
                ),
            );
            return Ok(None);
        }
        let made = match sink.compacted(summary, usage) {
            Ok(c) => c,
            Err(SeamError::Fatal(e)) => return Err(TurnEnd::Failed(e)),
            Err(SeamError::Refuse(e)) => {
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

/// Where the running turn starts in `history`: its user message, the last one (tool results and
/// notes have roles of their own); 0 when there is none.
fn turn_start(history: &[ChatMessage]) -> usize {
    history
        .iter()
        .rposition(|m| m.role == retrace_model::Role::User)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::turn_start;
    use retrace_model::ChatMessage;

    #[test]
    fn the_turn_starts_at_its_user_message() {
        let h = vec![
            ChatMessage::user("earlier"),
            ChatMessage::assistant("answer", vec![]),
            ChatMessage::user("now"),
            ChatMessage::assistant("step", vec![]),
        ];
        assert_eq!(turn_start(&h), 2);
        assert_eq!(turn_start(&[]), 0);
    }
}

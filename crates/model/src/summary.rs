//! The summarization request (SPEC §5.1 "summarize from / up to here"): the controller sends the
//! messages to fold followed by one user message starting with [`SUMMARY_PROMPT`], and keeps the
//! answer's text as the summary. Models need no special mode for it; the demo model recognises it to
//! answer deterministically.

use crate::types::{ChatRequest, Role};

/// The instruction that ends a summarization request. The controller sends it as the last user
/// message (optionally followed by more text, e.g. which part is being folded).
pub const SUMMARY_PROMPT: &str = "Summarize the conversation above so that it can replace it: the user's \
requests, what was done and to which files, decisions made, and work still open. Reply with the summary only.";

/// Whether `req` is a summarization request: its last message is a user message starting with
/// [`SUMMARY_PROMPT`].
pub fn is_summary_request(req: &ChatRequest) -> bool {
    req.messages
        .last()
        .is_some_and(|m| m.role == Role::User && m.content.starts_with(SUMMARY_PROMPT))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ChatMessage;

    #[test]
    fn only_a_last_user_message_with_the_prompt_counts() {
        let mut req = ChatRequest {
            messages: vec![ChatMessage::user("hi"), ChatMessage::user(SUMMARY_PROMPT)],
            tools: Vec::new(),
        };
        assert!(is_summary_request(&req));
        req.messages.push(ChatMessage::assistant("ok", Vec::new()));
        assert!(!is_summary_request(&req));
        req.messages = vec![ChatMessage::system(SUMMARY_PROMPT)];
        assert!(!is_summary_request(&req));
    }
}

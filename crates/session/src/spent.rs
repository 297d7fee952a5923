//! What a session's model requests took, by the model they ran with: the counts the server
//! reported for each of its turns' requests (the assistant messages' `usage`), on every head. A
//! session forked into a new workspace starts with copies of its source's messages, counts
//! included (the context a resumed conversation takes is read from them): those requests were
//! the source's, and are left out here.

use std::collections::BTreeMap;

use retrace_protocol::TokenUsage;

use crate::session::Session;

/// The requests of one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spent {
    /// The model as the log recorded it before them (`--model`'s form: `deepseek:deepseek-chat`,
    /// `script:/a.json`); `None` for requests the log recorded no model before (older logs).
    pub model: Option<String>,
    /// Their counts, summed.
    pub usage: TokenUsage,
}

impl Session {
    /// What this session's counted requests took, by model, in the order each model was first
    /// used.
    pub fn spent(&self) -> Vec<Spent> {
        let copied = match self.forked_from() {
            // A fork into a new workspace: its first messages are its source's.
            Some(f) if f.format >= 2 => f.messages,
            _ => 0,
        };
        let mut order: Vec<Option<String>> = Vec::new();
        let mut by: BTreeMap<Option<String>, TokenUsage> = BTreeMap::new();
        for c in self.index.counted.iter().filter(|c| c.node >= copied) {
            if !by.contains_key(&c.model) {
                order.push(c.model.clone());
            }
            let sum = by.entry(c.model.clone()).or_default();
            *sum = sum.plus(c.usage);
        }
        order
            .into_iter()
            .map(|model| Spent {
                usage: by.get(&model).copied().unwrap_or_default(),
                model,
            })
            .collect()
    }
}

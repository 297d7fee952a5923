//! The session's tally, counted here once for every frontend's status line
//! ([`SessionUsage`]): the tokens of every request the session's turns made (the log's counts,
//! on every head), their cost at each one's model's price, the price of the model in use, and how
//! much of its context window the selected head's conversation takes.

use retrace_protocol::{HeadId, ModelSpec, Prices, SessionUsage, TokenUsage};
use retrace_session::Session;

use crate::error::Result;
use crate::options::ServiceOptions;

/// What the tally needs besides the log: the prices and the configured window, the model in use,
/// and the size a compaction estimated for its head before any request on it was counted.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    prices: Prices,
    context_window: Option<u64>,
    model: Option<ModelSpec>,
    estimate: Option<(HeadId, u64)>,
}

impl Tally {
    /// The tally of a session opened by a service with `opts`, no model in use yet.
    pub(crate) fn of(opts: &ServiceOptions) -> Tally {
        Tally {
            prices: opts.prices.clone(),
            context_window: opts.context_window,
            model: None,
            estimate: None,
        }
    }

    /// The model in use from now (its price and window).
    pub(crate) fn use_model(&mut self, model: Option<ModelSpec>) {
        self.model = model;
    }

    /// A compaction made `head`, whose conversation it estimated at `tokens`.
    pub(crate) fn compacted(&mut self, head: HeadId, tokens: u64) {
        self.estimate = Some((head, tokens));
    }

    /// The tally of `session`, its head `head` selected.
    pub(crate) fn usage(&self, session: &Session, head: &HeadId) -> Result<SessionUsage> {
        let mut spent = TokenUsage::default();
        let mut cost = Some(0.0);
        for s in session.spent() {
            spent = spent.plus(s.usage);
            let price = s.model.as_deref().and_then(|m| self.prices.of(m));
            cost = match (cost, price) {
                (Some(sum), Some(p)) => Some(sum + p.cost(&s.usage)),
                _ => None,
            };
        }
        let context = match session.last_usage(head)? {
            Some(u) => Some(u.prompt_tokens.saturating_add(u.completion_tokens)),
            None => self
                .estimate
                .as_ref()
                .filter(|(h, _)| h == head)
                .map(|(_, tokens)| *tokens),
        };
        let model = self.model.as_ref();
        let price = model.and_then(|m| self.prices.of(&m.to_string()));
        let window = model.map(|m| {
            self.context_window
                .unwrap_or_else(|| retrace_model::default_context_window(m))
        });
        Ok(SessionUsage::new(spent, cost, price, context, window))
    }
}

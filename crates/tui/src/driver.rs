//! The UI's link to its session, without a terminal: the [`App`], the session's handle and event
//! subscription, and the requests in flight. A key goes to the app and the [`Effect`]s it returns
//! become requests on the handle (one task each); events and answers come back through
//! [`Driver::next`] and go to the app. The terminal runtime ([`crate::run`]) and the tests drive
//! the UI through this same type, so a test of a whole flow runs the real request code.
//!
//! The session is shown from its snapshot and the events numbered after it: on opening, and
//! whenever the app asks for a new snapshot ([`Effect::LoadSnapshot`]: the head changed, a
//! rewind, an undo, a compaction, a lagged stream), the driver takes one and subscribes again
//! from its `last_event_seq`, so that no event is missed nor applied twice.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyEvent, MouseEventKind};
use retrace_control::{Service, SessionHandle, Subscription};
use retrace_protocol::{
    CheckpointListing, Delivery, Error, FileHistory, HeadEntry, HeadRef, ModelSpec, PlanFileDiff, RewindPlan,
    RewindResult, SessionEntry, SessionSnapshot, SessionStatus, TurnAccepted, TurnResults,
};
use tokio::sync::mpsc;

use crate::app::{App, AppOptions};
use crate::effect::Effect;
use crate::error::TuiError;
use crate::status::StatusInfo;

/// The answer to a request an [`Effect`] made.
enum Answer {
    Sent(Result<TurnAccepted, Error>),
    Checkpoints(Result<CheckpointListing, Error>),
    Snapshot(Result<SessionSnapshot, Error>),
    Status(Result<SessionStatus, Error>),
    Heads(Result<Vec<HeadEntry>, Error>),
    Plan(Result<RewindPlan, Error>),
    Rewind(Result<RewindResult, Error>),
    Head(Result<HeadRef, Error>),
    Model(Result<ModelSpec, Error>),
    Sessions(Result<Vec<SessionEntry>, Error>),
    StatusReport(Result<Vec<SessionEntry>, Error>),
    Opened(Result<Opened, Error>),
    Compacted(Result<HeadRef, Error>),
    PlanMode(Result<bool, Error>),
    /// The whole diff of a file of a plan: the plan and the file, and the answer.
    PlanDiff(String, String, Result<PlanFileDiff, Error>),
    TurnResults(Result<TurnResults, Error>),
    History(Result<FileHistory, Error>),
    /// The MCP servers, and whether `/mcp` asked (else the palette did).
    Mcp(bool, Result<Vec<retrace_protocol::McpServerStatus>, Error>),
    McpPrompt(Result<String, Error>),
}

/// A session opened from `/sessions` or `/new`, ready to take the current one's place.
struct Opened {
    handle: SessionHandle,
    snapshot: SessionSnapshot,
    /// Why the model could not be set on it, if it could not.
    model_error: Option<Error>,
    /// What a fork into a new workspace made, when that is how it was opened.
    forked: Option<Box<retrace_protocol::WorkspaceFork>>,
}

/// What requests need besides the handle: the service (to list and open sessions), the model
/// (to give a session opened from `/sessions`) and the generation of the handle (answers about
/// a session the UI has left are dropped).
struct Context {
    service: Service,
    model: Option<ModelSpec>,
    generation: u64,
}

/// At most this many events are taken in one batch (one frame)…
const BATCH: usize = 512;
/// … and for at most this long.
const BATCH_TIME: Duration = Duration::from_millis(15);

/// The app and its session.
pub struct Driver {
    app: App,
    handle: SessionHandle,
    events: Subscription,
    ctx: Context,
    answer_tx: mpsc::UnboundedSender<(u64, Answer)>,
    answer_rx: mpsc::UnboundedReceiver<(u64, Answer)>,
    /// Every session shown, in the order first shown (`/sessions` and `/new` add to it).
    shown: Vec<String>,
}

impl Driver {
    /// An app on `handle`'s session: a snapshot shown, the events after it followed. `model` is
    /// given to sessions opened from `/sessions`.
    pub async fn open(
        service: Service,
        handle: SessionHandle,
        opts: AppOptions,
        model: Option<ModelSpec>,
    ) -> Result<Driver, TuiError> {
        let snapshot = handle.snapshot().await?;
        let mut app = App::new(StatusInfo::from_status(&snapshot.status), opts);
        app.set_configured_model(model.as_ref());
        let events = handle.subscribe(Some(snapshot.last_event_seq));
        app.on_snapshot(snapshot);
        let (answer_tx, answer_rx) = mpsc::unbounded_channel();
        let shown = vec![handle.session_id().to_string()];
        Ok(Driver {
            app,
            shown,
            handle,
            events,
            ctx: Context {
                service,
                model,
                generation: 0,
            },
            answer_tx,
            answer_rx,
        })
    }

    /// The app.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// The app, to change what the session does not decide (the viewport, a message).
    pub fn app_mut(&mut self) -> &mut App {
        &mut self.app
    }

    /// The session shown now (`/sessions` changes it).
    pub fn session_id(&self) -> String {
        self.handle.session_id().to_string()
    }

    /// Every session this UI has shown, the first first (the one shown now among them).
    pub fn sessions_shown(&self) -> &[String] {
        &self.shown
    }

    /// A key pressed at `now`; its requests are started.
    pub fn key(&mut self, key: KeyEvent, now: Instant) {
        let effects = self.app.on_key(key, now);
        self.perform_all(effects);
    }

    /// A mouse report; its requests are started.
    pub fn mouse(&mut self, kind: MouseEventKind) {
        let effects = self.app.on_mouse(kind);
        self.perform_all(effects);
    }

    /// Cancels the running turn, if any (the UI is leaving).
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// Pasted text.
    pub fn paste(&mut self, text: &str) {
        self.app.on_paste(text);
    }

    /// Waits for the next event of the session or answer to a request and gives it to the app
    /// (starting what it asks next). `false` once the session is closed. Cancel-safe: it can be
    /// one branch of a `select!`. Its only wait is for the first delivery or answer; from there
    /// it runs to its end without waiting again, so a future dropped by the `select!` has either
    /// taken nothing or taken a whole batch and started all it asked for (an event applied whose
    /// request was lost would leave the app waiting for a snapshot that never comes).
    pub async fn next(&mut self) -> bool {
        let effects = tokio::select! {
            delivery = self.events.recv() => match delivery {
                Some(delivery) => {
                    let mut effects = self.on_delivery(delivery);
                    // Whatever else is already there comes in the same batch (one frame for a
                    // burst of deltas, not one per delta), up to a bound so keys still get in.
                    let start = Instant::now();
                    for _ in 0..BATCH {
                        if start.elapsed() > BATCH_TIME {
                            break;
                        }
                        match ready_now(self.events.recv()) {
                            Some(Some(d)) => effects.extend(self.on_delivery(d)),
                            _ => break,
                        }
                    }
                    effects
                }
                None => return false,
            },
            Some((generation, answer)) = self.answer_rx.recv() => self.on_answer(generation, answer),
        };
        self.perform_all(effects);
        true
    }

    fn on_delivery(&mut self, delivery: Delivery) -> Vec<Effect> {
        match delivery {
            Delivery::Event(numbered) => self.app.on_event(numbered.seq, numbered.event),
            // Events were lost: a new snapshot, and the events after it.
            Delivery::Lagged { .. } => self.app.on_lagged(),
        }
    }

    /// Feeds everything that arrives to the app until nothing has for `quiet` (or the session
    /// closed): for tests and scripts, which have no screen to watch.
    pub async fn settle(&mut self, quiet: Duration) {
        while let Ok(true) = tokio::time::timeout(quiet, self.next()).await {}
    }

    fn on_answer(&mut self, generation: u64, answer: Answer) -> Vec<Effect> {
        if generation != self.ctx.generation {
            return Vec::new(); // about a session the UI has left
        }
        match answer {
            Answer::Snapshot(Ok(snapshot)) => {
                // The events after it, from where it was taken: those already seen after that
                // number come again (the app applies them to the new items, once each).
                self.events = self.handle.subscribe(Some(snapshot.last_event_seq));
                self.app.on_snapshot(snapshot);
                // A turn that ended unseen (events lost) sends what was queued behind it.
                self.app.after_job(true)
            }
            Answer::Opened(Ok(opened)) => {
                self.ctx.generation += 1;
                self.events = opened.handle.subscribe(Some(opened.snapshot.last_event_seq));
                self.handle = opened.handle;
                let id = self.handle.session_id().to_string();
                if !self.shown.contains(&id) {
                    self.shown.push(id);
                }
                self.app.on_session_opened(opened.snapshot);
                if let Some(made) = &opened.forked {
                    self.app.on_workspace_fork(made);
                }
                if let Some(e) = opened.model_error {
                    self.app
                        .say(&format!("the model cannot answer in this session: {}", e.message));
                }
                Vec::new()
            }
            answer => {
                if let Answer::Model(Ok(spec)) = &answer {
                    self.ctx.model = Some(spec.clone());
                }
                on_answer(&mut self.app, answer)
            }
        }
    }

    fn perform_all(&self, effects: Vec<Effect>) {
        for effect in effects {
            perform(&self.handle, &self.ctx, effect, &self.answer_tx);
        }
    }
}

/// What `fut` gives when polled once, without waiting: `None` when it is not ready (it is then
/// dropped; a subscription's `recv` loses nothing by that).
fn ready_now<F: std::future::Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    }
}

/// Feeds an answer to the app; what it asks next comes back.
fn on_answer(app: &mut App, answer: Answer) -> Vec<crate::effect::Effect> {
    match answer {
        Answer::Sent(Ok(_)) => Vec::new(),
        Answer::Checkpoints(Ok(l)) => {
            app.on_checkpoints(&l);
            Vec::new()
        }
        Answer::Snapshot(Ok(_)) => Vec::new(), // taken by the driver
        Answer::Snapshot(Err(e)) => {
            app.on_snapshot_failed(&e);
            Vec::new()
        }
        Answer::Status(Ok(s)) => {
            app.on_status(&s);
            Vec::new()
        }
        Answer::Heads(Ok(h)) => {
            app.on_heads(h);
            Vec::new()
        }
        Answer::Plan(Ok(p)) => app.on_plan(p),
        Answer::Rewind(Ok(r)) => app.on_result(&r),
        Answer::Head(Ok(r)) => {
            app.on_head_ref(&r);
            Vec::new()
        }
        Answer::Sessions(Ok(list)) => {
            app.on_sessions(list);
            Vec::new()
        }
        Answer::StatusReport(Ok(list)) => {
            app.on_status_report(&list);
            Vec::new()
        }
        Answer::Opened(Ok(_)) => Vec::new(), // taken by the loop
        Answer::Compacted(Ok(r)) => {
            app.on_compact_done(&r);
            Vec::new()
        }
        Answer::Compacted(Err(e)) => {
            app.on_compact_failed(&e);
            Vec::new()
        }
        Answer::PlanMode(Ok(on)) => {
            app.show_plan_mode(on);
            Vec::new()
        }
        Answer::PlanDiff(plan_id, _, Ok(d)) => {
            app.on_plan_diff(&plan_id, d);
            Vec::new()
        }
        Answer::PlanDiff(plan_id, path, Err(e)) => {
            app.on_plan_diff_failed(&plan_id, &path, &e);
            Vec::new()
        }
        Answer::TurnResults(Ok(r)) => {
            app.on_turn_results(r);
            Vec::new()
        }
        Answer::History(Ok(h)) => {
            app.on_file_history(h);
            Vec::new()
        }
        Answer::Mcp(show, Ok(list)) => {
            app.on_mcp(&list, show);
            Vec::new()
        }
        // The palette asked quietly: it lists no prompt.
        Answer::Mcp(false, Err(_)) => Vec::new(),
        Answer::McpPrompt(Ok(text)) => {
            app.on_mcp_prompt(&text);
            Vec::new()
        }
        Answer::Model(Ok(_)) => {
            app.say("model changed; it answers from the next turn");
            vec![Effect::LoadStatus]
        }
        Answer::Sent(Err(e))
        | Answer::Checkpoints(Err(e))
        | Answer::Status(Err(e))
        | Answer::Heads(Err(e))
        | Answer::Plan(Err(e))
        | Answer::Rewind(Err(e))
        | Answer::Head(Err(e))
        | Answer::Model(Err(e))
        | Answer::Sessions(Err(e))
        | Answer::StatusReport(Err(e))
        | Answer::PlanMode(Err(e))
        | Answer::TurnResults(Err(e))
        | Answer::History(Err(e))
        | Answer::Mcp(true, Err(e))
        | Answer::McpPrompt(Err(e))
        | Answer::Opened(Err(e)) => {
            app.on_error(&e);
            Vec::new()
        }
    }
}

/// Starts the request an effect asks for; its answer comes back on `tx`.
fn perform(handle: &SessionHandle, ctx: &Context, effect: Effect, tx: &mpsc::UnboundedSender<(u64, Answer)>) {
    let h = handle.clone();
    let generation = ctx.generation;
    let sender = tx.clone();
    let tx = Reply {
        generation,
        tx: sender,
    };
    match effect {
        Effect::Quit => {}
        Effect::Cancel => {
            h.cancel();
        }
        Effect::Approve { call_id, decision } => {
            // An approval already answered elsewhere (or denied by a cancel) is not an error here.
            let _ = h.approve(&call_id, decision);
        }
        Effect::AllowPrefix { call_id, prefix } => {
            let _ = h.answer_approval(
                &call_id,
                retrace_protocol::ApprovalAnswer {
                    decision: retrace_protocol::ApprovalDecision::Session,
                    prefix: Some(prefix),
                },
            );
        }
        Effect::Send(prompt) => {
            tokio::spawn(async move { tx.send(Answer::Sent(h.send(prompt).await)) });
        }
        Effect::LoadCheckpoints => {
            tokio::spawn(async move { tx.send(Answer::Checkpoints(h.checkpoints().await)) });
        }
        Effect::LoadSnapshot => {
            tokio::spawn(async move { tx.send(Answer::Snapshot(h.snapshot().await)) });
        }
        Effect::LoadStatus => {
            tokio::spawn(async move { tx.send(Answer::Status(h.status().await)) });
        }
        Effect::LoadHeads => {
            tokio::spawn(async move { tx.send(Answer::Heads(h.heads().await)) });
        }
        Effect::PrepareRewind(req) => {
            tokio::spawn(async move { tx.send(Answer::Plan(h.prepare_rewind(req).await)) });
        }
        Effect::LoadPlanDiff { plan_id, path } => {
            tokio::spawn(async move {
                let got = h.plan_file_diff(plan_id.clone(), path.clone()).await;
                tx.send(Answer::PlanDiff(plan_id, path, got));
            });
        }
        Effect::Commit(req) => {
            tokio::spawn(async move { tx.send(Answer::Rewind(h.commit_rewind(req).await)) });
        }
        Effect::LoadTurnResults(turn) => {
            tokio::spawn(async move { tx.send(Answer::TurnResults(h.turn_results(turn).await)) });
        }
        Effect::LoadHistory(path) => {
            tokio::spawn(async move { tx.send(Answer::History(h.file_history(path.into()).await)) });
        }
        Effect::PrepareRevert(req) => {
            tokio::spawn(async move { tx.send(Answer::Plan(h.prepare_revert(req).await)) });
        }
        Effect::CommitRevert(req) => {
            tokio::spawn(async move { tx.send(Answer::Rewind(h.commit_revert(req).await)) });
        }
        Effect::Undo(req) => {
            tokio::spawn(async move { tx.send(Answer::Rewind(h.undo(req).await)) });
        }
        Effect::Redo(req) => {
            tokio::spawn(async move { tx.send(Answer::Rewind(h.redo(req).await)) });
        }
        Effect::Fork(req) => {
            tokio::spawn(async move { tx.send(Answer::Head(h.fork(req).await)) });
        }
        Effect::SetModel(spec) => {
            tokio::spawn(
                async move { tx.send(Answer::Model(h.set_model(spec.clone()).await.map(|()| spec))) },
            );
        }
        Effect::LoadSessions => {
            let svc = ctx.service.clone();
            let workspace = h.workspace().to_path_buf();
            tokio::spawn(async move { tx.send(Answer::Sessions(svc.sessions(Some(&workspace)).await)) });
        }
        Effect::LoadMcp { show } => {
            tokio::spawn(async move { tx.send(Answer::Mcp(show, h.mcp_status().await)) });
        }
        Effect::McpPrompt { server, prompt, args } => {
            let args = args
                .into_iter()
                .map(|(k, v)| (k, serde_json::Value::String(v)))
                .collect();
            tokio::spawn(
                async move { tx.send(Answer::McpPrompt(h.mcp_prompt(&server, &prompt, args).await)) },
            );
        }
        Effect::LoadStatusReport => {
            let svc = ctx.service.clone();
            let workspace = h.workspace().to_path_buf();
            tokio::spawn(async move { tx.send(Answer::StatusReport(svc.sessions(Some(&workspace)).await)) });
        }
        Effect::OpenSession(id) => {
            let (svc, model) = (ctx.service.clone(), ctx.model.clone());
            tokio::spawn(async move { tx.send(Answer::Opened(open_session(&svc, &id, model).await)) });
        }
        Effect::NewSession => {
            let svc = ctx.service.clone();
            tokio::spawn(async move {
                let opened = async {
                    let made = svc.create_like(&h).await?;
                    opened(made, None).await
                };
                tx.send(Answer::Opened(opened.await));
            });
        }
        Effect::ForkWorkspace(req) => {
            let svc = ctx.service.clone();
            tokio::spawn(async move {
                let opened = async {
                    let (made, forked) = svc.fork_into_workspace(&h, req).await?;
                    let mut o = opened(made, None).await?;
                    o.forked = Some(Box::new(forked));
                    Ok(o)
                };
                tx.send(Answer::Opened(opened.await));
            });
        }
        Effect::Compact => {
            tokio::spawn(async move {
                let req = retrace_protocol::CompactRequest { model: None };
                tx.send(Answer::Compacted(h.compact(req).await));
            });
        }
        Effect::SetPlanMode(on) => {
            tokio::spawn(async move { tx.send(Answer::PlanMode(h.set_plan_mode(on).await.map(|()| on))) });
        }
        Effect::Summarize(req) => {
            tokio::spawn(async move { tx.send(Answer::Head(h.summarize(req).await)) });
        }
        Effect::Switch(req) => {
            tokio::spawn(async move { tx.send(Answer::Head(h.switch(req).await)) });
        }
    }
}

/// Where a request's answer goes, tagged with the handle's generation.
struct Reply {
    generation: u64,
    tx: mpsc::UnboundedSender<(u64, Answer)>,
}

impl Reply {
    fn send(&self, answer: Answer) {
        // The loop has ended: nobody waits for the answer.
        let _ = self.tx.send((self.generation, answer));
    }
}

/// Opens session `id` for `/sessions`, with its own model (the one its log records) else the
/// UI's, and its snapshot.
async fn open_session(svc: &Service, id: &str, model: Option<ModelSpec>) -> Result<Opened, Error> {
    let handle = svc.open(id, None).await?;
    let model = match handle.recorded_model().await {
        Ok(Some(own)) => {
            // The log records no key variable, and anyone who can write it could name any URL.
            // The UI's model gives its key variable for the same provider and endpoint; a recorded
            // base URL that is neither the UI's nor the provider's own gets no key at all.
            let same = model.filter(|m| m.provider == own.provider);
            let configured = ModelSpec {
                base_url: same.as_ref().and_then(|m| m.base_url.clone()),
                api_key_env: same.and_then(|m| m.api_key_env),
                ..own.clone()
            };
            let mut spec = retrace_control::reopen_recorded_model(&own, configured).spec;
            if own.base_url.is_none() && spec.base_url.is_some() {
                // No endpoint recorded: the provider's own, with its own key variable.
                spec.base_url = None;
                spec.api_key_env = None;
            }
            Some(spec)
        }
        _ => model,
    };
    let model_error = match model {
        Some(m) => handle.set_model(m).await.err(),
        None => None,
    };
    opened(handle, model_error).await
}

/// `handle`'s session with its snapshot, to take the current one's place.
async fn opened(handle: SessionHandle, model_error: Option<Error>) -> Result<Opened, Error> {
    let snapshot = handle.snapshot().await?;
    Ok(Opened {
        handle,
        snapshot,
        model_error,
        forked: None,
    })
}

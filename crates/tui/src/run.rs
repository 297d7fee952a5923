//! The runtime: owns the terminal and the session handle, and moves values between them and the
//! [`App`]. Keys come from a reader thread (crossterm's blocking `poll`/`read`), events from the
//! session's subscription, answers from one task per request; each arrives on a channel and the
//! loop redraws after it. A tick redraws only while the spinner turns, so an idle UI draws
//! nothing. Nothing here decides what a key means.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event as TermEvent};
use retrace_control::{Service, SessionHandle};
use retrace_protocol::{
    CheckpointListing, Delivery, Error, HeadEntry, HeadRef, ModelSpec, RewindPlan, RewindResult,
    SessionEntry, SessionStatus, TranscriptEntry, TurnAccepted,
};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::mpsc;

use crate::app::{App, AppOptions, StatusInfo};
use crate::effect::Effect;
use crate::error::TuiError;
use crate::terminal::TerminalGuard;
use crate::view;

/// How the UI runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// No colours (`NO_COLOR` set).
    pub no_color: bool,
    /// How often the spinner moves while a turn runs.
    pub tick: Duration,
    /// A message shown on the first screen (why the model cannot answer yet, and what to do).
    pub first_message: Option<String>,
    /// The model given to sessions opened from `/sessions` (`/model` changes it).
    pub model: Option<ModelSpec>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            tick: Duration::from_millis(120),
            first_message: None,
            model: None,
        }
    }
}

/// The answer to a request an [`Effect`] made.
enum Answer {
    Sent(Result<TurnAccepted, Error>),
    Checkpoints(Result<CheckpointListing, Error>),
    Transcript(Result<Vec<TranscriptEntry>, Error>),
    Status(Result<SessionStatus, Error>),
    Heads(Result<Vec<HeadEntry>, Error>),
    Plan(Result<RewindPlan, Error>),
    Rewind(Result<RewindResult, Error>),
    Head(Result<HeadRef, Error>),
    Model(Result<ModelSpec, Error>),
    Sessions(Result<Vec<SessionEntry>, Error>),
    Opened(Result<Opened, Error>),
}

/// A session opened from `/sessions`, ready to take the current one's place.
struct Opened {
    handle: SessionHandle,
    status: SessionStatus,
    transcript: Vec<TranscriptEntry>,
    /// Why the model could not be set on it, if it could not.
    model_error: Option<Error>,
}

/// What requests need besides the handle: the service (to list and open sessions), the model
/// (to give a session opened from `/sessions`) and the generation of the handle (answers about
/// a session the UI has left are dropped).
struct Context {
    service: Service,
    model: Option<ModelSpec>,
    generation: u64,
}

/// Runs the UI on an open session until the user quits; says which session it showed last. The terminal is restored on every way
/// out (return, error, panic, SIGTERM/SIGHUP); the session stays open in the caller's hands.
pub async fn run(service: Service, handle: SessionHandle, opts: RunOptions) -> Result<Ended, TuiError> {
    let mut handle = handle;
    let mut ctx = Context {
        service,
        model: opts.model.clone(),
        generation: 0,
    };
    let status = handle.status().await?;
    let mut app = App::new(
        StatusInfo::from_status(&status),
        AppOptions {
            no_color: opts.no_color,
        },
    );
    app.on_transcript(&handle.transcript(None).await?);
    if let Some(m) = &opts.first_message {
        app.say(m);
    }
    let mut events = handle.subscribe(Some(status.last_event_seq));

    let mut guard = TerminalGuard::enter()?;
    let stop = Arc::new(AtomicBool::new(false));
    let (term_tx, mut term_rx) = mpsc::unbounded_channel();
    let reader = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match event::poll(Duration::from_millis(50)) {
                    Ok(true) => match event::read() {
                        Ok(ev) => {
                            if term_tx.send(ev).is_err() {
                                break;
                            }
                        }
                        Err(_) => break,
                    },
                    Ok(false) => {}
                    Err(_) => break,
                }
            }
        })
    };
    let (answer_tx, mut answer_rx) = mpsc::unbounded_channel();
    let mut tick = tokio::time::interval(opts.tick);
    let mut term_signal = signal(SignalKind::terminate()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGTERM",
        source,
    })?;
    let mut hup_signal = signal(SignalKind::hangup()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGHUP",
        source,
    })?;
    // A SIGINT from outside (Ctrl-C itself is a key in raw mode) ends the UI like SIGTERM: the
    // terminal restored, the running turn cancelled by the caller, its shell killed.
    let mut int_signal = signal(SignalKind::interrupt()).map_err(|source| TuiError::Terminal {
        op: "listen for SIGINT",
        source,
    })?;

    // A frame is drawn only after something that can change the screen: not on an idle tick.
    let mut dirty = true;
    let result = loop {
        if dirty {
            if let Ok(size) = guard.terminal.size() {
                app.set_viewport(size.width, size.height);
            }
            if let Err(source) = guard.terminal.draw(|f| view::draw(f, &app)) {
                break Err(TuiError::Terminal { op: "draw", source });
            }
        }
        if app.should_quit() {
            break Ok(());
        }
        dirty = true;
        let effects = tokio::select! {
            ev = term_rx.recv() => match ev {
                Some(TermEvent::Key(key)) => app.on_key(key, Instant::now()),
                Some(TermEvent::Mouse(m)) => app.on_mouse(m.kind),
                Some(TermEvent::Paste(text)) => {
                    app.on_paste(&text);
                    Vec::new()
                }
                Some(_) => Vec::new(), // a resize: the next draw lays out again
                None => break Ok(()),
            },
            delivery = events.recv() => match delivery {
                Some(Delivery::Event(numbered)) => app.on_event(numbered.event),
                Some(Delivery::Lagged { .. }) => vec![Effect::LoadTranscript, Effect::LoadStatus],
                None => break Ok(()),
            },
            Some((generation, answer)) = answer_rx.recv() => {
                if generation != ctx.generation {
                    Vec::new() // about a session the UI has left
                } else if let Answer::Opened(Ok(opened)) = answer {
                    ctx.generation += 1;
                    events = opened.handle.subscribe(Some(opened.status.last_event_seq));
                    handle = opened.handle;
                    app.on_session_opened(&opened.status, &opened.transcript);
                    if let Some(e) = opened.model_error {
                        app.say(&format!("the model cannot answer in this session: {}", e.message));
                    }
                    Vec::new()
                } else {
                    if let Answer::Model(Ok(spec)) = &answer {
                        ctx.model = Some(spec.clone());
                    }
                    on_answer(&mut app, answer)
                }
            }
            _ = tick.tick() => {
                dirty = app.on_tick();
                Vec::new()
            }
            _ = term_signal.recv() => break Ok(()),
            _ = hup_signal.recv() => break Ok(()),
            _ = int_signal.recv() => break Ok(()),
        };
        for effect in effects {
            perform(&handle, &ctx, effect, &answer_tx);
        }
    };
    stop.store(true, Ordering::SeqCst);
    drop(guard);
    drop(term_rx);
    // Not joined: when the terminal has gone (a hangup), crossterm's read never returns, so the
    // thread is left to end with the process, which the caller ends next.
    drop(reader);
    result.map(|()| Ended {
        session_id: handle.session_id().to_string(),
    })
}

/// How the UI ended.
#[derive(Debug, Clone)]
pub struct Ended {
    /// The session shown last (`/sessions` may have changed it): what `--session` resumes.
    pub session_id: String,
}

/// Feeds an answer to the app; what it asks next comes back.
fn on_answer(app: &mut App, answer: Answer) -> Vec<crate::effect::Effect> {
    match answer {
        Answer::Sent(Ok(_)) => Vec::new(),
        Answer::Checkpoints(Ok(l)) => {
            app.on_checkpoints(&l);
            Vec::new()
        }
        Answer::Transcript(Ok(t)) => {
            app.on_transcript(&t);
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
        Answer::Head(Ok(r)) => app.on_head_ref(&r),
        Answer::Sessions(Ok(list)) => {
            app.on_sessions(list);
            Vec::new()
        }
        Answer::Opened(Ok(_)) => Vec::new(), // taken by the loop
        Answer::Model(Ok(_)) => {
            app.say("model changed; it answers from the next turn");
            vec![Effect::LoadStatus]
        }
        Answer::Sent(Err(e))
        | Answer::Checkpoints(Err(e))
        | Answer::Transcript(Err(e))
        | Answer::Status(Err(e))
        | Answer::Heads(Err(e))
        | Answer::Plan(Err(e))
        | Answer::Rewind(Err(e))
        | Answer::Head(Err(e))
        | Answer::Model(Err(e))
        | Answer::Sessions(Err(e))
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
        Effect::Send(prompt) => {
            tokio::spawn(async move { tx.send(Answer::Sent(h.send(prompt).await)) });
        }
        Effect::LoadCheckpoints => {
            tokio::spawn(async move { tx.send(Answer::Checkpoints(h.checkpoints().await)) });
        }
        Effect::LoadTranscript => {
            tokio::spawn(async move { tx.send(Answer::Transcript(h.transcript(None).await)) });
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
        Effect::Commit(req) => {
            tokio::spawn(async move { tx.send(Answer::Rewind(h.commit_rewind(req).await)) });
        }
        Effect::Undo(req) => {
            tokio::spawn(async move { tx.send(Answer::Rewind(h.undo(req).await)) });
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
            tokio::spawn(async move { tx.send(Answer::Sessions(svc.sessions(Some(&workspace)))) });
        }
        Effect::OpenSession(id) => {
            let (svc, model) = (ctx.service.clone(), ctx.model.clone());
            tokio::spawn(async move { tx.send(Answer::Opened(open_session(&svc, &id, model).await)) });
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

/// Opens session `id` for `/sessions`, with the UI's model, its status and transcript.
async fn open_session(svc: &Service, id: &str, model: Option<ModelSpec>) -> Result<Opened, Error> {
    let handle = svc.open(id, None).await?;
    let model_error = match model {
        Some(m) => handle.set_model(m).await.err(),
        None => None,
    };
    let status = handle.status().await?;
    let transcript = handle.transcript(None).await?;
    Ok(Opened {
        handle,
        status,
        transcript,
        model_error,
    })
}

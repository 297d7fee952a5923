//! The `/api` routes (docs/API.md): each parses its input strictly, calls the session's handle
//! and answers with the `protocol` type the handle returned, or `{"error": …}` with the status of
//! [`status_of`](crate::error::status_of). Nothing here decides anything the controller decides.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use retrace_protocol::{
    ApprovalAnswer, CancelAnswer, CheckpointListing, CommitRevert, CommitRewind, CompactRequest,
    CreateSession, ErrorCode, FileHistory, ForkRequest, HeadEntry, HeadRef, OnConflict, PlanFileDiff,
    PlanModeRequest, PrepareRevert, PrepareRewind, RedoRequest, RetireRequest, RewindPlan, RewindResult,
    SendPrompt, SessionCreated, SessionHolder, SummarizeDirection, SummarizeRequest, SwitchRequest,
    TranscriptEntry, TurnResults, UndoRequest, WorkspaceForkRequest,
};

use crate::body::{Empty, StrictJson};
use crate::error::ApiError;
use crate::events::events;
use crate::models::{held_with_branch, snapshot_with_branch, with_branch, ListedSession, StatusAnswer};
use crate::params::Param;
use crate::registry::Registry;

type Reg = State<Arc<Registry>>;
type Answer<T> = Result<Json<T>, ApiError>;
type Params = Result<Query<HashMap<String, String>>, QueryRejection>;

/// The API's routes, with an answer in JSON for a method a route does not take.
pub fn routes(registry: Arc<Registry>) -> Router {
    let session = Router::new()
        .route("/transcript", get(transcript))
        .route("/checkpoints", get(checkpoints))
        .route("/turns/{turn}/results", get(turn_results))
        .route("/history", get(file_history))
        .route("/heads", get(heads))
        .route("/mcp", get(mcp_servers))
        .route("/events", get(events))
        .route("/messages", post(send))
        .route("/cancel", post(cancel))
        .route("/approvals/{call_id}", post(approve))
        .route("/rewind/prepare", post(prepare_rewind))
        .route("/rewind/commit", post(commit_rewind))
        .route("/plans/{plan_id}/diff", get(plan_file_diff))
        .route("/undo", post(undo))
        .route("/redo", post(redo))
        .route("/fork", post(fork))
        .route("/summarize", post(summarize))
        .route("/compact", post(compact))
        .route("/plan", post(plan_mode))
        .route("/model", post(crate::models::set_model))
        .route("/switch", post(switch))
        .route("/retire", post(retire))
        .route("/revert/prepare", post(prepare_revert))
        .route("/revert/commit", post(commit_revert));
    Router::new()
        .route("/api/models", get(crate::models::list_models))
        .route("/api/workspace", get(crate::models::workspace))
        .route("/api/sessions", get(list).post(create))
        .route("/api/sessions/{id}", get(status))
        .nest("/api/sessions/{id}", session)
        .method_not_allowed_fallback(no_method)
        .with_state(registry)
}

/// The answer to a path under `/api` that is no route.
pub(crate) fn no_route() -> ApiError {
    ApiError::with_status(StatusCode::NOT_FOUND, ErrorCode::NotFound, "no such API route")
}

async fn no_method() -> ApiError {
    ApiError::with_status(
        StatusCode::METHOD_NOT_ALLOWED,
        ErrorCode::Usage,
        "this API route does not take that method",
    )
}

/// The query parameters, or a `usage` error; a parameter not in `known` is one too (like an
/// unknown field of a body).
pub(crate) fn params(q: Params, known: &[&str]) -> Result<HashMap<String, String>, ApiError> {
    let m = q
        .map(|Query(m)| m)
        .map_err(|e| ApiError::usage(format!("the query string is not valid: {e}")))?;
    if let Some(k) = m.keys().find(|k| !known.contains(&k.as_str())) {
        let takes = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        return Err(ApiError::usage(format!(
            "unknown query parameter `{k}`; this route takes: {takes}"
        )));
    }
    Ok(m)
}

async fn list(State(r): Reg, q: Params) -> Answer<Vec<ListedSession>> {
    let q = params(q, &["workspace"])?;
    let ws = match q.get("workspace") {
        Some(w) if !w.is_empty() => PathBuf::from(w),
        _ => r.workspace().to_path_buf(),
    };
    Ok(Json(crate::models::listed(&r, &ws).await?))
}

async fn create(State(r): Reg, StrictJson(req): StrictJson<CreateSession>) -> Result<Response, ApiError> {
    let h = r
        .create(req.workspace.as_deref(), req.model.as_deref(), req.backend)
        .await?;
    let body = SessionCreated {
        session_id: h.session_id(),
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// The session's status (with its workspace's `branch`); with `?include=items`, its snapshot
/// (status, items, heads, pending approvals, `last_event_seq`), taken at one instant. A session
/// another process holds is read from its log instead, its status saying who holds it
/// (`held_by`): the page shows it and changes nothing.
async fn status(State(r): Reg, Param(id): Param<String>, q: Params) -> Result<Response, ApiError> {
    let include = params(q, &["include"])?.remove("include").unwrap_or_default();
    let items = match include.as_str() {
        "" => false,
        "items" => true,
        other => {
            return Err(ApiError::usage(format!(
                "`include={other}` is not known; the only value is `items` (the session's snapshot)"
            )))
        }
    };
    let held = match r.get(&id).await {
        Ok(handle) if items => {
            return Ok(Json(snapshot_with_branch(handle.snapshot().await?, None)?).into_response())
        }
        Ok(handle) => return Ok(Json(with_branch(handle.status().await?)).into_response()),
        Err(e) => e,
    };
    // Read without the lease; a holder that let go meanwhile is still named (the page reads the
    // session again and then opens it).
    let (status, snapshot, held_by) = r
        .read_held(&id, held, move |rd| {
            let snapshot = items.then(|| rd.snapshot()).transpose()?;
            let held_by = rd
                .held_by()
                .unwrap_or_else(|| SessionHolder::new(0, String::new(), true, None));
            Ok((rd.status(), snapshot, held_by))
        })
        .await?;
    match snapshot {
        Some(snap) => Ok(Json(snapshot_with_branch(snap, Some(held_by))?).into_response()),
        None => Ok(Json(held_with_branch(status, Some(held_by))).into_response()),
    }
}

// The routes that only read answer for a session another process holds too, from its log read
// without the lease (`Registry::read_held`): its checkpoints offer no action then, each saying why.

async fn transcript(State(r): Reg, Param(id): Param<String>, q: Params) -> Answer<Vec<TranscriptEntry>> {
    let head = params(q, &["head"])?.remove("head").filter(|h| !h.is_empty());
    Ok(Json(match r.get(&id).await {
        Ok(h) => h.transcript(head).await?,
        Err(e) => {
            r.read_held(&id, e, move |rd| rd.transcript(head.as_deref()))
                .await?
        }
    }))
}

async fn checkpoints(State(r): Reg, Param(id): Param<String>) -> Answer<CheckpointListing> {
    Ok(Json(match r.get(&id).await {
        Ok(h) => h.checkpoints().await?,
        Err(e) => r.read_held(&id, e, |rd| rd.checkpoints()).await?,
    }))
}

async fn turn_results(State(r): Reg, Param((id, turn)): Param<(String, u64)>) -> Answer<TurnResults> {
    Ok(Json(match r.get(&id).await {
        Ok(h) => h.turn_results(turn).await?,
        Err(e) => r.read_held(&id, e, move |rd| rd.turn_results(turn)).await?,
    }))
}

async fn file_history(State(r): Reg, Param(id): Param<String>, q: Params) -> Answer<FileHistory> {
    let path = params(q, &["path"])?
        .remove("path")
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ApiError::usage("`path` is required: the file, relative to the workspace"))?;
    Ok(Json(match r.get(&id).await {
        Ok(h) => h.file_history(path.into()).await?,
        Err(e) => {
            r.read_held(&id, e, move |rd| rd.file_history(std::path::Path::new(&path)))
                .await?
        }
    }))
}

async fn heads(State(r): Reg, Param(id): Param<String>) -> Answer<Vec<HeadEntry>> {
    Ok(Json(match r.get(&id).await {
        Ok(h) => h.heads().await?,
        Err(e) => r.read_held(&id, e, |rd| rd.heads()).await?,
    }))
}

/// The session's MCP servers (started if they were not): status, tools, prompts. A session
/// another process holds has none here (its servers are that process's).
async fn mcp_servers(
    State(r): Reg,
    Param(id): Param<String>,
) -> Answer<Vec<retrace_protocol::McpServerStatus>> {
    Ok(Json(match r.get(&id).await {
        Ok(h) => h.mcp_status().await?,
        Err(e) => r.read_held(&id, e, |_| Ok(Vec::new())).await?,
    }))
}

async fn send(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<SendPrompt>,
) -> Result<Response, ApiError> {
    let accepted = r.get(&id).await?.send(req.prompt).await?;
    Ok((StatusCode::ACCEPTED, Json(accepted)).into_response())
}

async fn cancel(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(_): StrictJson<Empty>,
) -> Answer<CancelAnswer> {
    let cancelled = r.get(&id).await?.cancel();
    Ok(Json(CancelAnswer { cancelled }))
}

async fn approve(
    State(r): Reg,
    Param((id, call_id)): Param<(String, String)>,
    StrictJson(req): StrictJson<ApprovalAnswer>,
) -> Result<StatusCode, ApiError> {
    r.get(&id).await?.answer_approval(&call_id, req)?;
    Ok(StatusCode::NO_CONTENT)
}

/// A prepared plan as the page gets it: the plan, and the conflict choice its preview opens on
/// (`RewindPlan::preselected`: keep the conflicted files when that commits; absent when nothing
/// conflicts).
#[derive(Debug, serde::Serialize)]
struct PlanAnswer {
    #[serde(flatten)]
    plan: RewindPlan,
    #[serde(skip_serializing_if = "Option::is_none")]
    preselected: Option<OnConflict>,
}

impl From<RewindPlan> for PlanAnswer {
    fn from(plan: RewindPlan) -> PlanAnswer {
        PlanAnswer {
            preselected: plan.preselected(),
            plan,
        }
    }
}

async fn prepare_rewind(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<PrepareRewind>,
) -> Answer<PlanAnswer> {
    Ok(Json(r.get(&id).await?.prepare_rewind(req).await?.into()))
}

async fn commit_rewind(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<CommitRewind>,
) -> Answer<RewindResult> {
    Ok(Json(r.get(&id).await?.commit_rewind(req).await?))
}

/// The whole diff of one file of a prepared rewind or revert (`?path=P`, as the plan's `files`
/// name it): what a cut (`diff_truncated`) or deferred (`diff_deferred`) diff leaves out.
async fn plan_file_diff(
    State(r): Reg,
    Param((id, plan_id)): Param<(String, String)>,
    q: Params,
) -> Answer<PlanFileDiff> {
    let path = params(q, &["path"])?
        .remove("path")
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ApiError::usage("`path` is missing: the file of the plan whose diff to give"))?;
    Ok(Json(r.get(&id).await?.plan_file_diff(plan_id, path).await?))
}

async fn undo(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<UndoRequest>,
) -> Answer<RewindResult> {
    Ok(Json(r.get(&id).await?.undo(req).await?))
}

async fn redo(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<RedoRequest>,
) -> Answer<RewindResult> {
    Ok(Json(r.get(&id).await?.redo(req).await?))
}

/// `POST …/fork`'s body: `ForkRequest`, or with `worktree` a fork into a new workspace
/// (`WorkspaceForkRequest`; `select` does not apply to it).
#[derive(Debug, serde::Deserialize)]
struct ForkBody {
    turn: u64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    select: Option<bool>,
    /// Absent: a fork of the conversation; `null` is refused (a body built from an unset value
    /// must not fork the conversation instead).
    #[serde(default, deserialize_with = "present")]
    worktree: Option<Option<String>>,
}

/// A key that is present: `Some(value)`, `Some(None)` for `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    <Option<String> as serde::Deserialize>::deserialize(d).map(Some)
}

async fn fork(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(body): StrictJson<ForkBody>,
) -> Result<Response, ApiError> {
    let worktree = match body.worktree {
        Some(Some(w)) => Some(w),
        Some(None) => {
            return Err(retrace_protocol::Error::new(
                ErrorCode::Usage,
                "worktree: null names no directory; name one for a fork into a new workspace, or leave `worktree` out to fork the conversation",
            )
            .with_details(retrace_protocol::ErrorDetails::Worktree { path: String::new() })
            .into())
        }
        None => None,
    };
    let Some(worktree) = worktree else {
        let req = ForkRequest {
            turn: body.turn,
            name: body.name,
            select: body.select.unwrap_or(true),
        };
        return Ok(Json(r.get(&id).await?.fork(req).await?).into_response());
    };
    if body.select.is_some() {
        return Err(ApiError::usage(
            "`select` does not apply to a fork into a new workspace (its session is a new one)",
        ));
    }
    let req = WorkspaceForkRequest {
        turn: body.turn,
        worktree,
        name: body.name,
    };
    let made = r.fork_into_workspace(&id, req).await.map_err(|mut e| {
        if matches!(e.details, Some(retrace_protocol::ErrorDetails::Worktree { .. })) {
            e.message = format!("worktree: {}", e.message);
        }
        e
    })?;
    Ok((StatusCode::CREATED, Json(made)).into_response())
}

/// `POST …/summarize`'s body: `SummarizeRequest` without its `model`, which is refused over HTTP
/// as an unknown field (a model names an endpoint and a key variable: a page could send a key
/// anywhere). The session's own model writes the summary.
#[derive(Debug, serde::Deserialize)]
struct SummarizeBody {
    turn: u64,
    direction: SummarizeDirection,
}

async fn summarize(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(body): StrictJson<SummarizeBody>,
) -> Answer<HeadRef> {
    let req = SummarizeRequest {
        turn: body.turn,
        direction: body.direction,
        model: None,
    };
    Ok(Json(r.get(&id).await?.summarize(req).await?))
}

/// `POST …/compact`'s body: `{}`. A `model` is refused as an unknown field, as for summarize.
#[derive(Debug, serde::Deserialize)]
struct CompactBody {}

async fn compact(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(CompactBody {}): StrictJson<CompactBody>,
) -> Answer<HeadRef> {
    Ok(Json(
        r.get(&id).await?.compact(CompactRequest { model: None }).await?,
    ))
}

async fn plan_mode(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<PlanModeRequest>,
) -> Answer<StatusAnswer> {
    let h = r.get(&id).await?;
    h.set_plan_mode(req.on).await?;
    Ok(Json(with_branch(h.status().await?)))
}

async fn switch(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<SwitchRequest>,
) -> Answer<HeadRef> {
    Ok(Json(r.get(&id).await?.switch(req).await?))
}

async fn retire(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<RetireRequest>,
) -> Result<StatusCode, ApiError> {
    r.get(&id).await?.retire(req.head).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn prepare_revert(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<PrepareRevert>,
) -> Answer<PlanAnswer> {
    Ok(Json(r.get(&id).await?.prepare_revert(req).await?.into()))
}

async fn commit_revert(
    State(r): Reg,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<CommitRevert>,
) -> Answer<RewindResult> {
    Ok(Json(r.get(&id).await?.commit_revert(req).await?))
}

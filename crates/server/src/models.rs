//! What the page shows around a session besides its items: the models one can choose
//! (`GET /api/models`), the workspace of new sessions and the session to open first (`GET
//! /api/workspace`), a session's model switched (`POST …/{id}/model`), a session's status with the
//! git branch of its workspace (`branch`, read from its `.git`, no `git` binary), and, for a
//! session another process holds, who holds it (`held_by`, in the status and the listing).

use std::path::Path;
use std::sync::Arc;

use axum::extract::State;
use axum::Json;
use retrace_protocol::{
    Error, ErrorCode, ModelChoices, ModelOffer, SessionEntry, SessionHolder, SessionSnapshot, SessionStatus,
    SetModelRequest, WorkspaceInfo,
};
use serde::Serialize;

use crate::body::StrictJson;
use crate::error::ApiError;
use crate::params::Param;
use crate::registry::Registry;

/// A session's status with the branch its workspace is on, and who holds it when another
/// process does.
#[derive(Debug, Serialize)]
pub(crate) struct StatusAnswer {
    #[serde(flatten)]
    status: SessionStatus,
    /// The git branch (or short detached commit) of the workspace; absent outside a repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
    /// The other process that holds the session (this server only reads it); absent when this
    /// server has it open.
    #[serde(skip_serializing_if = "Option::is_none")]
    held_by: Option<SessionHolder>,
}

/// `status` with its workspace's branch (a session this server has open).
pub(crate) fn with_branch(status: SessionStatus) -> StatusAnswer {
    held_with_branch(status, None)
}

/// `status` with its workspace's branch and `held_by`.
pub(crate) fn held_with_branch(status: SessionStatus, held_by: Option<SessionHolder>) -> StatusAnswer {
    let branch = retrace_control::git_branch(Path::new(&status.workspace));
    StatusAnswer {
        status,
        branch,
        held_by,
    }
}

/// A snapshot whose `status` carries its workspace's branch, as [`with_branch`], and `held_by`
/// when another process holds the session.
pub(crate) fn snapshot_with_branch(
    snap: SessionSnapshot,
    held_by: Option<SessionHolder>,
) -> Result<serde_json::Value, ApiError> {
    let internal = |e: serde_json::Error| ApiError::from(Error::new(ErrorCode::Internal, e.to_string()));
    let branch = retrace_control::git_branch(Path::new(&snap.status.workspace));
    let mut v = serde_json::to_value(snap).map_err(internal)?;
    if let Some(status) = v.get_mut("status").and_then(|s| s.as_object_mut()) {
        if let Some(b) = branch {
            status.insert("branch".into(), b.into());
        }
        if let Some(h) = held_by {
            status.insert("held_by".into(), serde_json::to_value(h).map_err(internal)?);
        }
    }
    Ok(v)
}

/// A session of the listing (`GET /api/sessions`), with who holds it when another process does.
#[derive(Debug, Serialize)]
pub(crate) struct ListedSession {
    #[serde(flatten)]
    entry: SessionEntry,
    /// The other process that holds the session, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    held_by: Option<SessionHolder>,
}

/// The sessions of `ws`, each with who holds it when another process does.
pub(crate) async fn listed(r: &Registry, ws: &Path) -> Result<Vec<ListedSession>, ApiError> {
    let service = r.service().clone();
    let list = service.sessions(Some(ws)).await?;
    let listed = tokio::task::spawn_blocking(move || {
        list.into_iter()
            .map(|entry| ListedSession {
                held_by: service.held_by(&entry.id),
                entry,
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| {
        ApiError::from(Error::new(
            ErrorCode::Internal,
            format!("listing the sessions failed: {e}"),
        ))
    })?;
    Ok(listed)
}

/// The models to offer, as the terminal UI's `/model` list offers them
/// ([`retrace_protocol::model_choices`]): the server's own first, its provider's known models,
/// then `demo` (the `script:FILE` form, which needs a path typed, is left out).
pub(crate) fn choices(default: Option<&retrace_protocol::ModelSpec>) -> ModelChoices {
    choices_with(default, |var| {
        std::env::var_os(var).is_some_and(|v| !v.is_empty())
    })
}

/// [`choices`], with `is_set` telling whether an environment variable holds a key.
pub(crate) fn choices_with(
    default: Option<&retrace_protocol::ModelSpec>,
    is_set: impl Fn(&str) -> bool,
) -> ModelChoices {
    // The variable a model's key is read from when it is unset; none for a model that needs no
    // key (the demo, a script, an endpoint configured without one).
    let missing = |spec: &retrace_protocol::ModelSpec| {
        let var = match &spec.api_key_env {
            Some(v) if v.is_empty() => None,
            Some(v) => Some(v.clone()),
            None => spec.provider.api_key_env().map(str::to_string),
        };
        var.filter(|v| !is_set(v))
    };
    let offered: Vec<ModelOffer> = retrace_protocol::model_choices(default, None)
        .into_iter()
        .filter_map(|c| {
            let lacks = missing(c.spec.as_ref()?);
            Some(ModelOffer {
                model: c.value,
                ready: lacks.is_none(),
                note: lacks.map(|v| format!("no API key: export {v}")),
            })
        })
        .collect();
    ModelChoices {
        default: default.map(|m| m.to_string()),
        models: offered.iter().map(|o| o.model.clone()).collect(),
        offered,
    }
}

pub(crate) async fn list_models(State(r): State<Arc<Registry>>) -> Json<ModelChoices> {
    Json(choices(r.default_model()))
}

/// The server's workspace (that of new sessions), its branch, and the session a page opens when
/// its address names none (the newest that no other process holds).
pub(crate) async fn workspace(State(r): State<Arc<Registry>>) -> Result<Json<WorkspaceInfo>, ApiError> {
    let ws = r.workspace();
    Ok(Json(WorkspaceInfo {
        workspace: ws.display().to_string(),
        branch: retrace_control::git_branch(ws),
        session: r.service().newest_free(ws).await?,
    }))
}

/// Switches session `id` to the model asked for (resolved as `--model` is, set up now: one that
/// cannot be used is an error and the session keeps its model); its status.
pub(crate) async fn set_model(
    State(r): State<Arc<Registry>>,
    Param(id): Param<String>,
    StrictJson(req): StrictJson<SetModelRequest>,
) -> Result<Json<StatusAnswer>, ApiError> {
    let h = r.get(&id).await?;
    h.set_model(r.resolve(&req.model)?).await?;
    Ok(Json(with_branch(h.status().await?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::ModelSpec;

    #[test]
    fn the_default_comes_first_then_its_provider_then_demo_each_once() {
        let chat = ModelSpec::parse("deepseek:deepseek-chat").unwrap();
        let c = choices(Some(&chat));
        assert_eq!(c.default.as_deref(), Some("deepseek:deepseek-chat"));
        assert_eq!(
            c.models.first().map(String::as_str),
            Some("deepseek:deepseek-chat")
        );
        assert_eq!(c.models.last().map(String::as_str), Some("demo"));
        let mut unique = c.models.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), c.models.len(), "{:?}", c.models);
        let script = ModelSpec::parse("script:/tmp/s.json").unwrap();
        let c = choices(Some(&script));
        assert_eq!(c.models.first().map(String::as_str), Some("script:/tmp/s.json"));
        assert_eq!(c.models.last().map(String::as_str), Some("demo"));
        assert!(!choices(None).models.iter().any(|m| m == "script:FILE"));
    }

    /// Found by a new user's trial: the page offered hosted models with no key set, and choosing
    /// one failed (a 502); each model now says whether it can answer, and what it lacks.
    #[test]
    fn a_model_whose_key_is_unset_is_offered_as_not_ready_with_what_to_export() {
        let chat = ModelSpec::parse("deepseek:deepseek-chat").unwrap();
        let c = choices_with(Some(&chat), |_| false);
        let of = |m: &str| c.offered.iter().find(|o| o.model == m).unwrap();
        assert!(!of("deepseek:deepseek-chat").ready);
        assert_eq!(
            of("deepseek:deepseek-reasoner").note.as_deref(),
            Some("no API key: export DEEPSEEK_API_KEY")
        );
        assert!(of("demo").ready && of("demo").note.is_none());
        let c = choices_with(Some(&chat), |v| v == "DEEPSEEK_API_KEY");
        assert!(c.offered.iter().all(|o| o.ready), "{:?}", c.offered);
        // An endpoint configured without a key needs none.
        let mut own = ModelSpec::parse("openai:mock").unwrap();
        own.base_url = Some("http://127.0.0.1:1".into());
        own.api_key_env = Some(String::new());
        let c = choices_with(Some(&own), |_| false);
        assert!(c.offered[0].ready, "{:?}", c.offered);
        assert_eq!(
            c.models,
            c.offered.iter().map(|o| o.model.clone()).collect::<Vec<_>>()
        );
    }
}

//! What the page shows around a session besides its items: the models one can choose
//! (`GET /api/models`), the workspace of new sessions (`GET /api/workspace`), a session's model switched (`POST …/{id}/model`), and a session's status
//! with the git branch of its workspace (`branch`, read from its `.git`, no `git` binary).

use std::path::Path;
use std::sync::Arc;

use axum::extract::State;
use axum::Json;
use retrace_protocol::{
    Error, ErrorCode, ModelChoices, SessionSnapshot, SessionStatus, SetModelRequest, WorkspaceInfo,
};
use serde::Serialize;

use crate::body::StrictJson;
use crate::error::ApiError;
use crate::params::Param;
use crate::registry::Registry;

/// A session's status with the branch its workspace is on.
#[derive(Debug, Serialize)]
pub(crate) struct StatusAnswer {
    #[serde(flatten)]
    status: SessionStatus,
    /// The git branch (or short detached commit) of the workspace; absent outside a repository.
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<String>,
}

/// `status` with its workspace's branch.
pub(crate) fn with_branch(status: SessionStatus) -> StatusAnswer {
    let branch = retrace_control::git_branch(Path::new(&status.workspace));
    StatusAnswer { status, branch }
}

/// A snapshot whose `status` carries its workspace's branch, as [`with_branch`].
pub(crate) fn snapshot_with_branch(snap: SessionSnapshot) -> Result<serde_json::Value, ApiError> {
    let branch = retrace_control::git_branch(Path::new(&snap.status.workspace));
    let mut v = serde_json::to_value(snap)
        .map_err(|e| ApiError::from(Error::new(ErrorCode::Internal, e.to_string())))?;
    if let (Some(b), Some(status)) = (branch, v.get_mut("status").and_then(|s| s.as_object_mut())) {
        status.insert("branch".into(), b.into());
    }
    Ok(v)
}

/// The models to offer, as the terminal UI's `/model` list offers them
/// ([`retrace_protocol::model_choices`]): the server's own first, its provider's known models,
/// then `demo` (the `script:FILE` form, which needs a path typed, is left out).
pub(crate) fn choices(default: Option<&retrace_protocol::ModelSpec>) -> ModelChoices {
    let models = retrace_protocol::model_choices(default, None)
        .into_iter()
        .filter(|c| c.spec.is_some())
        .map(|c| c.value)
        .collect();
    ModelChoices {
        default: default.map(|m| m.to_string()),
        models,
    }
}

pub(crate) async fn list_models(State(r): State<Arc<Registry>>) -> Json<ModelChoices> {
    Json(choices(r.default_model()))
}

/// The server's workspace (that of new sessions) and its branch.
pub(crate) async fn workspace(State(r): State<Arc<Registry>>) -> Json<WorkspaceInfo> {
    let ws = r.workspace();
    Json(WorkspaceInfo {
        workspace: ws.display().to_string(),
        branch: retrace_control::git_branch(ws),
    })
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
}

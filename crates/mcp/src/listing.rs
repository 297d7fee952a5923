//! A server's tools, listed leniently: one tool the SDK cannot read (an input schema that is not a
//! JSON object, a field of the wrong type) is skipped with the reason, and the others are kept,
//! instead of the whole listing failing and the server with it.

use rmcp::model::{
    ClientRequest, CustomResult, ListToolsRequest, PaginatedRequestParams, ServerResult, Tool,
};
use rmcp::service::{RoleClient, ServiceError};
use serde_json::Value;

/// A listed tool the client could not take: its name (as the server gave it, or a placeholder)
/// and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skipped {
    pub(crate) name: String,
    pub(crate) why: String,
}

/// At most this many pages of tools are asked for (a server whose cursor never ends stops here).
const MAX_PAGES: usize = 100;

/// Every tool the server lists (all pages), and those that could not be read.
pub(crate) async fn list_tools(
    peer: &rmcp::Peer<RoleClient>,
) -> Result<(Vec<Tool>, Vec<Skipped>), ServiceError> {
    let mut tools = Vec::new();
    let mut skipped = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params: Some(PaginatedRequestParams { meta: None, cursor }),
            extensions: Default::default(),
        });
        cursor = match peer.send_request(request).await? {
            ServerResult::ListToolsResult(r) => {
                tools.extend(r.tools);
                r.next_cursor
            }
            // What the SDK could not read as a listing: read tool by tool.
            ServerResult::CustomResult(CustomResult(v)) => {
                let (good, bad) = read_tools(&v).ok_or(ServiceError::UnexpectedResponse)?;
                tools.extend(good);
                skipped.extend(bad);
                v.get("nextCursor").and_then(Value::as_str).map(str::to_string)
            }
            ServerResult::EmptyResult(_) => None,
            _ => return Err(ServiceError::UnexpectedResponse),
        };
        if cursor.is_none() {
            break;
        }
    }
    Ok((tools, skipped))
}

/// The tools of a `tools/list` result the SDK could not read: those that read, and why each
/// other did not. `None`: it has no list of tools at all.
fn read_tools(result: &Value) -> Option<(Vec<Tool>, Vec<Skipped>)> {
    let listed = result.get("tools")?.as_array()?;
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for (i, raw) in listed.iter().enumerate() {
        let name = raw
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("(tool {} of the list, without a name)", i + 1));
        let why = match raw.get("inputSchema") {
            Some(Value::Object(_)) => None,
            Some(_) => Some("its input schema is not a JSON object".to_string()),
            None => Some("it has no input schema".to_string()),
        };
        match (why, serde_json::from_value::<Tool>(raw.clone())) {
            (None, Ok(tool)) => good.push(tool),
            (Some(why), _) => bad.push(Skipped { name, why }),
            (None, Err(e)) => bad.push(Skipped {
                name,
                why: format!("it could not be read ({e})"),
            }),
        }
    }
    Some((good, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bad_tool_is_skipped_and_the_others_kept() {
        let result = serde_json::json!({"tools": [
            {"name": "good", "inputSchema": {"type": "object"}},
            {"name": "bad", "inputSchema": "nope"},
            {"name": "worse", "inputSchema": {"type": "object"}, "annotations": 7},
            {"inputSchema": {}},
        ]});
        let (good, bad) = read_tools(&result).unwrap();
        assert_eq!(good.len(), 1);
        assert_eq!(good[0].name, "good");
        assert_eq!(
            bad[0],
            Skipped {
                name: "bad".into(),
                why: "its input schema is not a JSON object".into()
            }
        );
        assert!(bad[1].why.starts_with("it could not be read"), "{bad:?}");
        assert_eq!(bad[2].name, "(tool 4 of the list, without a name)");
        assert!(read_tools(&serde_json::json!({"nope": 1})).is_none());
    }
}

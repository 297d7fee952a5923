//! Request bodies: at most [`MAX_BODY`] bytes (413 beyond), sent as `Content-Type:
//! application/json` (415 otherwise; a request without a body needs none), JSON objects whose
//! fields are all known and of the right type (400 `usage` otherwise, the message naming the
//! field). The `protocol` request types accept unknown fields (they are read from files and other
//! programs too), so the check is done here: every key serde did not use is refused.

use axum::body::Body;
use axum::extract::{FromRequest, Request};
use axum::http::{header, HeaderMap, StatusCode};
use http_body_util::BodyExt;
use retrace_protocol::ErrorCode;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// The largest request body, in bytes (a prompt is also capped by the controller).
pub const MAX_BODY: usize = 1 << 20;

/// A JSON body of type `T`, read strictly. An empty body reads as `{}`.
#[derive(Debug)]
pub struct StrictJson<T>(pub T);

fn too_large() -> ApiError {
    ApiError::with_status(
        StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::Usage,
        format!("the request body is larger than {MAX_BODY} bytes"),
    )
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for StrictJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, ApiError> {
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > DRAIN_LIMIT as u64) {
            return Err(too_large());
        }
        let json = is_json(req.headers());
        if declared.is_some_and(|n| n > 0) && !json {
            return Err(not_json());
        }
        let bytes = read_capped(req.into_body()).await?;
        if !bytes.is_empty() && !json {
            return Err(not_json());
        }
        parse(&bytes).map(StrictJson)
    }
}

/// Whether the request says its body is JSON: `application/json`, parameters allowed.
fn is_json(headers: &HeaderMap) -> bool {
    let mut all = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(v), None) = (all.next(), all.next()) else {
        return false;
    };
    v.to_str().is_ok_and(|v| {
        v.split(';')
            .next()
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
    })
}

fn not_json() -> ApiError {
    ApiError::with_status(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        ErrorCode::Usage,
        "the request body must be JSON, sent with the header `Content-Type: application/json`",
    )
}

/// How much of a body over the cap is read (and dropped) before the answer, so that a client
/// still sending gets its 413 instead of a broken connection. Beyond it the connection is cut.
const DRAIN_LIMIT: usize = 16 * MAX_BODY;

/// The body, if it is at most [`MAX_BODY`] bytes; 413 otherwise (after draining what was sent,
/// up to [`DRAIN_LIMIT`]).
async fn read_capped(mut body: Body) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| ApiError::usage(format!("the request body could not be read: {e}")))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen = seen.saturating_add(data.len());
        if seen > DRAIN_LIMIT {
            return Err(too_large());
        }
        if seen <= MAX_BODY {
            out.extend_from_slice(&data);
        }
    }
    if seen > MAX_BODY {
        return Err(too_large());
    }
    Ok(out)
}

/// Reads `bytes` as a `T`, refusing unknown fields and naming the field at fault.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(ApiError::usage(
            "the request body is not valid: it must be a JSON object",
        ));
    }
    let mut unknown = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(text);
    let mut note = |path: serde_ignored::Path<'_>| unknown.push(path.to_string());
    let ignoring = serde_ignored::Deserializer::new(&mut de, &mut note);
    let value: T = serde_path_to_error::deserialize(ignoring).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() || path.is_empty() || path == "." || path == "?" {
            ApiError::usage(format!("the request body is not valid: {inner}"))
        } else {
            ApiError::usage(format!("field `{path}`: {inner}"))
        }
    })?;
    de.end()
        .map_err(|e| ApiError::usage(format!("the request body is not valid: {e}")))?;
    if let Some(field) = unknown.first() {
        return Err(ApiError::usage(format!("unknown field `{field}`")));
    }
    Ok(value)
}

/// A body that must be empty or `{}` (`cancel`).
#[derive(Debug, serde::Deserialize)]
pub struct Empty {}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::{CommitRewind, SendPrompt};

    fn message(r: Result<impl std::fmt::Debug, ApiError>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.status, StatusCode::BAD_REQUEST);
        assert_eq!(e.error.code, ErrorCode::Usage);
        e.error.message
    }

    #[test]
    fn wrong_types_missing_and_unknown_fields_name_the_field() {
        let m = message(parse::<SendPrompt>(br#"{"prompt": 3}"#));
        assert!(m.contains("`prompt`") && m.contains("invalid type"), "{m}");
        let m = message(parse::<SendPrompt>(br#"{}"#));
        assert!(m.contains("missing field `prompt`"), "{m}");
        let m = message(parse::<SendPrompt>(br#"{"prompt": "x", "promt": "y"}"#));
        assert!(m.contains("unknown field `promt`"), "{m}");
        let m = message(parse::<CommitRewind>(
            br#"{"plan_id": "p", "on_conflict": "maybe"}"#,
        ));
        assert!(m.contains("`on_conflict`") && m.contains("maybe"), "{m}");
        let m = message(parse::<SendPrompt>(br#"{"prompt": "x""#));
        assert!(m.contains("not valid"), "{m}");
        let m = message(parse::<SendPrompt>(br#"{"prompt": "x"} trailing"#));
        assert!(m.contains("not valid"), "{m}");
        let m = message(parse::<SendPrompt>(br#"["x"]"#));
        assert!(m.contains("not valid"), "{m}");
    }

    #[test]
    fn json_is_application_json_with_any_parameters() {
        let h = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(header::CONTENT_TYPE, v.parse().unwrap());
            }
            h
        };
        for ok in [
            "application/json",
            "Application/JSON; charset=utf-8",
            " application/json ;x=y",
        ] {
            assert!(is_json(&h(&[ok])), "{ok}");
        }
        for bad in [
            "text/plain",
            "application/jsonx",
            "application/x-www-form-urlencoded",
            "",
        ] {
            assert!(!is_json(&h(&[bad])), "{bad}");
        }
        assert!(!is_json(&h(&[])));
        assert!(!is_json(&h(&["application/json", "text/plain"])));
    }

    #[test]
    fn an_empty_body_is_an_empty_object() {
        parse::<Empty>(b"").unwrap();
        parse::<Empty>(b" {} ").unwrap();
        let m = message(parse::<Empty>(br#"{"x": 1}"#));
        assert!(m.contains("unknown field `x`"), "{m}");
    }
}

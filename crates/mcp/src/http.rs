//! The streamable HTTP client a server over HTTP is reached with: the SDK's, over reqwest, with
//! two changes. A message is capped ([`MAX_MESSAGE_BYTES`](crate::MAX_MESSAGE_BYTES): a JSON
//! body, a line of an event stream), so a server cannot make Retrace hold a message of any size;
//! and an answer with an error status says so ("the server answered HTTP 500 Internal Server
//! Error"), not that its content type was unexpected.

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::stream::{BoxStream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_LAST_EVENT_ID, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

use crate::cap::{too_large, LineCounter, Tripwire};

type HttpError = StreamableHttpError<reqwest::Error>;

/// reqwest, with messages capped and error statuses said.
#[derive(Clone)]
pub(crate) struct CappedClient {
    inner: reqwest::Client,
    cap: usize,
    wire: Arc<Tripwire>,
}

impl CappedClient {
    pub(crate) fn new(inner: reqwest::Client, cap: usize, wire: Arc<Tripwire>) -> CappedClient {
        CappedClient { inner, cap, wire }
    }

    /// An event stream of `response`'s body whose lines may not pass the cap.
    fn events(&self, response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
        let (cap, wire) = (self.cap, self.wire.clone());
        let mut counter = LineCounter::default();
        let body = response.bytes_stream().map(move |chunk| {
            let chunk = chunk.map_err(std::io::Error::other)?;
            if wire.is_tripped() || !counter.take(&chunk, cap) {
                wire.trip();
                return Err(too_large(cap));
            }
            Ok(chunk)
        });
        SseStream::from_bytes_stream(body).boxed()
    }

    /// `response`'s body as one JSON message, read up to the cap.
    async fn json(&self, mut response: reqwest::Response) -> Result<ServerJsonRpcMessage, HttpError> {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > self.cap {
                self.wire.trip();
                return Err(StreamableHttpError::Io(too_large(self.cap)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(serde_json::from_slice(&body)?)
    }
}

/// An answer with an error status, in words.
fn status_error(status: reqwest::StatusCode) -> HttpError {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("the server answered HTTP {status}")))
}

/// A content type that is neither JSON nor an event stream, in words.
fn content_type_error(ct: Option<&reqwest::header::HeaderValue>) -> HttpError {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(match ct {
        Some(ct) => format!(
            "the server answered with content of type `{}`, neither JSON nor an event stream",
            String::from_utf8_lossy(ct.as_bytes())
        ),
        None => "the server answered with no content type".to_string(),
    }))
}

fn is(ct: &reqwest::header::HeaderValue, mime: &str) -> bool {
    ct.as_bytes().starts_with(mime.as_bytes())
}

impl StreamableHttpClient for CappedClient {
    type Error = reqwest::Error;

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let mut request = self
            .inner
            .get(uri.as_ref())
            .header(ACCEPT, [EVENT_STREAM_MIME_TYPE, JSON_MIME_TYPE].join(", "))
            .header(HEADER_SESSION_ID, session_id.as_ref());
        if let Some(id) = last_event_id {
            request = request.header(HEADER_LAST_EVENT_ID, id);
        }
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await?;
        if response.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !response.status().is_success() {
            return Err(status_error(response.status()));
        }
        match response.headers().get(CONTENT_TYPE) {
            Some(ct) if is(ct, EVENT_STREAM_MIME_TYPE) || is(ct, JSON_MIME_TYPE) => {}
            other => return Err(content_type_error(other)),
        }
        Ok(self.events(response))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
    ) -> Result<(), HttpError> {
        self.inner.delete_session(uri, session_id, auth_token).await
    }

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request = self
            .inner
            .post(uri.as_ref())
            .header(ACCEPT, [EVENT_STREAM_MIME_TYPE, JSON_MIME_TYPE].join(", "));
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        if let Some(id) = session_id {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        let response = request.json(&message).send().await?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            if let Some(header) = response.headers().get(WWW_AUTHENTICATE) {
                let header = header
                    .to_str()
                    .map_err(|_| {
                        StreamableHttpError::UnexpectedServerResponse(Cow::from(
                            "invalid www-authenticate header value",
                        ))
                    })?
                    .to_string();
                return Err(StreamableHttpError::AuthRequired(AuthRequiredError {
                    www_authenticate_header: header,
                }));
            }
        }
        if matches!(
            status,
            reqwest::StatusCode::ACCEPTED | reqwest::StatusCode::NO_CONTENT
        ) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            return Err(status_error(status));
        }
        let session = response
            .headers()
            .get(HEADER_SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        match response.headers().get(CONTENT_TYPE) {
            Some(ct) if is(ct, EVENT_STREAM_MIME_TYPE) => {
                Ok(StreamableHttpPostResponse::Sse(self.events(response), session))
            }
            Some(ct) if is(ct, JSON_MIME_TYPE) => Ok(StreamableHttpPostResponse::Json(
                self.json(response).await?,
                session,
            )),
            other => Err(content_type_error(other)),
        }
    }
}

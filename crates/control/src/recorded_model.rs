//! A resumed session's recorded model, as this process runs it. The log records a model's spec
//! and base URL, never a key nor where to read one (docs/FORMATS.md): anyone who can write the log
//! could name any URL. So a key goes with a recorded model only to an endpoint the user chose for
//! that provider now — the configured one (config file, `RETRACE_BASE_URL`) or the provider's
//! own; a recorded base URL that is neither is used without any key.

use retrace_protocol::ModelSpec;

/// The model to run a session with, and what to say about it (once, to the user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReopenedModel {
    /// The model, with the key variable it may use (`Some("")`: no key at all).
    pub spec: ModelSpec,
    /// Set when the recorded base URL is not one configured for a key.
    pub notice: Option<String>,
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim().trim_end_matches('/') == b.trim().trim_end_matches('/')
}

/// `own` (the model the log records) as `configured` (the same model as this process's
/// configuration resolves it, with its base URL and key variable) allows: the configured endpoint
/// and key when the recorded base URL is absent, the configured one, or (nothing configured) the
/// provider's own; otherwise the recorded base URL with no key, and a notice saying so.
pub fn reopen_recorded_model(own: &ModelSpec, configured: ModelSpec) -> ReopenedModel {
    let Some(recorded) = own.base_url.as_deref().filter(|u| !u.trim().is_empty()) else {
        return ReopenedModel {
            spec: configured,
            notice: None,
        };
    };
    let allowed = configured
        .base_url
        .as_deref()
        .or(configured.provider.default_base_url());
    if allowed.is_some_and(|u| same_url(u, recorded)) {
        return ReopenedModel {
            spec: configured,
            notice: None,
        };
    }
    let mut spec = configured;
    spec.base_url = Some(recorded.to_string());
    // An empty variable name: no key at all (never the provider's own).
    spec.api_key_env = Some(String::new());
    ReopenedModel {
        notice: Some(format!(
            "the session's recorded base URL `{recorded}` is not configured for a key; requests go without one; give --model/--base-url to choose"
        )),
        spec,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrace_protocol::Provider;

    fn spec(url: Option<&str>, var: Option<&str>) -> ModelSpec {
        let mut s = ModelSpec::new(Provider::DeepSeek, "deepseek-chat");
        s.base_url = url.map(str::to_string);
        s.api_key_env = var.map(str::to_string);
        s
    }

    #[test]
    fn a_recorded_url_that_is_not_configured_gets_no_key() {
        let own = spec(Some("http://127.0.0.1:1/evil"), None);
        let r = reopen_recorded_model(&own, spec(None, None));
        assert_eq!(r.spec.base_url.as_deref(), Some("http://127.0.0.1:1/evil"));
        assert_eq!(r.spec.api_key_env.as_deref(), Some(""));
        assert!(r.notice.is_some_and(|n| n.contains("127.0.0.1:1/evil")));
        let r = reopen_recorded_model(&own, spec(Some("http://proxy"), Some("PROXY_KEY")));
        assert_eq!(r.spec.api_key_env.as_deref(), Some(""));
    }

    #[test]
    fn the_configured_or_the_providers_own_url_keeps_its_key() {
        let configured = spec(Some("http://proxy/"), Some("PROXY_KEY"));
        let r = reopen_recorded_model(&spec(Some("http://proxy"), None), configured.clone());
        assert_eq!((r.spec, r.notice), (configured, None));
        let own = spec(Some("https://api.deepseek.com"), None);
        let r = reopen_recorded_model(&own, spec(None, None));
        assert_eq!((r.spec, r.notice), (spec(None, None), None));
        let r = reopen_recorded_model(&spec(None, None), spec(Some("http://proxy"), Some("K")));
        assert_eq!(r.spec.api_key_env.as_deref(), Some("K"));
    }
}

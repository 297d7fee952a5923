//! The models a frontend offers to choose from (the terminal UI's `/model` with no argument):
//! the configured one, the others its provider is known to serve, the built-in demo, and the
//! script model as a form to fill in. Every frontend lists the same ones in the same words.

use crate::config::{ModelSpec, Provider};

/// One model offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    /// What `/model` takes for it (`script:FILE` is a form: the file is to be typed).
    pub value: String,
    /// The model, when the value names one (`None` for `script:FILE`).
    pub spec: Option<ModelSpec>,
    /// One line about it.
    pub note: String,
}

impl Provider {
    /// The hosted models this provider is known to serve, its default first.
    pub fn known_models(self) -> &'static [&'static str] {
        match self {
            Provider::DeepSeek => &["deepseek-chat", "deepseek-reasoner"],
            Provider::OpenAi => &["gpt-4.1", "gpt-4.1-mini", "gpt-4o", "gpt-4o-mini", "o4-mini"],
            Provider::Script | Provider::Demo => &[],
        }
    }

    /// The provider's name as people write it.
    fn display_name(self) -> &'static str {
        match self {
            Provider::DeepSeek => "DeepSeek",
            Provider::OpenAi => "OpenAI",
            Provider::Script => "script",
            Provider::Demo => "demo",
        }
    }
}

/// The models to offer when `configured` is the model set up (from `--model` or the config;
/// `None`: nothing was; DeepSeek is the default provider, and the one offered besides the demo or
/// a script). The configured model comes first,
/// whole (its endpoint and key variable kept); its provider's other known models follow, unless
/// it has an endpoint of its own (which may serve none of them); then the demo and the script
/// model. `missing_key` is the variable the configured model's key is read from when the
/// frontend found it unset: its note then says so ("DeepSeek, no API key: export
/// DEEPSEEK_API_KEY") instead of "DeepSeek, configured", and so does every other model of its
/// provider read with the same variable (else "DeepSeek, needs DEEPSEEK_API_KEY").
pub fn model_choices(configured: Option<&ModelSpec>, missing_key: Option<&str>) -> Vec<ModelChoice> {
    let mut out = Vec::new();
    // A hosted model is named by its provider first: "DeepSeek, …".
    let hosted = |p: Provider| match p {
        Provider::DeepSeek | Provider::OpenAi => format!("{}, ", p.display_name()),
        Provider::Script | Provider::Demo => String::new(),
    };
    let no_key = |var: &str| format!("no API key: export {var}");
    if let Some(c) = configured.filter(|c| !matches!(c.provider, Provider::Demo)) {
        let what = match missing_key {
            Some(var) => no_key(var),
            None => "configured".to_string(),
        };
        let note = match &c.base_url {
            Some(url) => format!("{what}, at {url}"),
            None => format!("{}{what}", hosted(c.provider)),
        };
        out.push(ModelChoice {
            value: c.to_string(),
            spec: Some(c.clone()),
            note,
        });
    }
    let provider = match configured.map(|c| c.provider) {
        Some(p @ (Provider::DeepSeek | Provider::OpenAi)) => p,
        _ => Provider::DeepSeek,
    };
    let own_endpoint = configured.is_some_and(|c| c.base_url.is_some());
    if !own_endpoint {
        for name in provider.known_models() {
            let spec = ModelSpec::new(provider, *name);
            if out.iter().any(|c| c.spec.as_ref() == Some(&spec)) {
                continue;
            }
            let key = provider.api_key_env().unwrap_or_default();
            // The configured model's missing key is this one's too: said in the same words.
            let what = match missing_key {
                Some(var) if var == key && configured.is_some_and(|c| c.provider == provider) => no_key(var),
                _ => format!("needs {key}"),
            };
            out.push(ModelChoice {
                value: spec.to_string(),
                spec: Some(spec),
                note: format!("{}{what}", hosted(provider)),
            });
        }
    }
    out.push(ModelChoice {
        value: "demo".to_string(),
        spec: Some(ModelSpec::demo()),
        note: "built in, no key needed: try the rewind".to_string(),
    });
    out.push(ModelChoice {
        value: "script:FILE".to_string(),
        spec: None,
        note: "replay a script of answers (type its path)".to_string(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(c: &[ModelChoice]) -> Vec<&str> {
        c.iter().map(|c| c.value.as_str()).collect()
    }

    #[test]
    fn the_configured_model_then_its_providers_then_demo_and_script() {
        let nothing = model_choices(None, None);
        assert_eq!(
            values(&nothing),
            [
                "deepseek:deepseek-chat",
                "deepseek:deepseek-reasoner",
                "demo",
                "script:FILE"
            ]
        );
        assert!(nothing[0].note.contains("DEEPSEEK_API_KEY"));
        assert_eq!(nothing[3].spec, None);

        let reasoner = ModelSpec::new(Provider::DeepSeek, "deepseek-reasoner");
        let c = model_choices(Some(&reasoner), None);
        assert_eq!(
            values(&c),
            [
                "deepseek:deepseek-reasoner",
                "deepseek:deepseek-chat",
                "demo",
                "script:FILE"
            ]
        );
        assert_eq!(c[0].note, "DeepSeek, configured");
        assert_eq!(c[1].note, "DeepSeek, needs DEEPSEEK_API_KEY");

        let openai = ModelSpec::new(Provider::OpenAi, "gpt-4o");
        let c = model_choices(Some(&openai), None);
        assert_eq!(c[0].value, "openai:gpt-4o");
        assert!(values(&c).contains(&"openai:o4-mini"));
        assert!(!values(&c).iter().any(|v| v.starts_with("deepseek")));

        // A model on an endpoint of its own: only it, whole, then demo and script.
        let mut local = ModelSpec::new(Provider::OpenAi, "llama3");
        local.base_url = Some("http://127.0.0.1:8080/v1".into());
        let c = model_choices(Some(&local), None);
        assert_eq!(values(&c), ["openai:llama3", "demo", "script:FILE"]);
        assert_eq!(c[0].spec.as_ref(), Some(&local));
        assert!(c[0].note.contains("127.0.0.1"));

        assert_eq!(
            values(&model_choices(Some(&ModelSpec::demo()), None)),
            [
                "deepseek:deepseek-chat",
                "deepseek:deepseek-reasoner",
                "demo",
                "script:FILE"
            ]
        );
        let script = model_choices(Some(&ModelSpec::script("/tmp/s.json")), None);
        assert_eq!(script[0].value, "script:/tmp/s.json");
        assert_eq!(script[1].value, "deepseek:deepseek-chat");
    }

    #[test]
    fn a_configured_model_without_its_key_says_what_is_missing() {
        let chat = ModelSpec::new(Provider::DeepSeek, "deepseek-chat");
        let c = model_choices(Some(&chat), Some("DEEPSEEK_API_KEY"));
        assert_eq!(c[0].value, "deepseek:deepseek-chat");
        // Found by a new user's trial: the two DeepSeek models were described differently.
        assert_eq!(c[0].note, "DeepSeek, no API key: export DEEPSEEK_API_KEY");
        assert_eq!(c[1].value, "deepseek:deepseek-reasoner");
        assert_eq!(c[1].note, "DeepSeek, no API key: export DEEPSEEK_API_KEY");
        let mut local = ModelSpec::new(Provider::OpenAi, "llama3");
        local.base_url = Some("http://127.0.0.1:8080/v1".into());
        let c = model_choices(Some(&local), Some("LOCAL_KEY"));
        assert_eq!(
            c[0].note,
            "no API key: export LOCAL_KEY, at http://127.0.0.1:8080/v1"
        );
    }
}

use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn model_values_parse() {
    let remote = |p, n: &str| ModelSpec::Remote {
        provider: p,
        name: n.to_string(),
    };
    assert_eq!(
        ModelSpec::parse("deepseek:deepseek-chat").unwrap(),
        remote(Provider::DeepSeek, "deepseek-chat")
    );
    assert_eq!(
        ModelSpec::parse("openai:gpt-4o").unwrap(),
        remote(Provider::OpenAi, "gpt-4o")
    );
    assert_eq!(
        ModelSpec::parse("deepseek-reasoner").unwrap(),
        remote(Provider::DeepSeek, "deepseek-reasoner")
    );
    assert_eq!(
        ModelSpec::parse("openai:llama3:8b").unwrap(),
        remote(Provider::OpenAi, "llama3:8b")
    );
    assert_eq!(ModelSpec::parse("demo").unwrap(), ModelSpec::Demo);
    assert_eq!(
        ModelSpec::parse("script:/tmp/s.json").unwrap(),
        ModelSpec::Script(PathBuf::from("/tmp/s.json"))
    );
    assert_eq!(
        ModelSpec::parse("openai:gpt-4o").unwrap().to_string(),
        "openai:gpt-4o"
    );
}

#[test]
fn bad_model_values_say_what_to_write() {
    for (text, needle) in [
        ("", "empty"),
        ("script:", "needs a file"),
        ("openai:", "model name is missing"),
        ("llama3:8b", "unknown provider `llama3`"),
    ] {
        let msg = ModelSpec::parse(text).unwrap_err().to_string();
        assert!(msg.contains(needle), "{text}: {msg}");
    }
}

#[test]
fn a_missing_key_names_the_variable_and_the_alternatives() {
    let err = open_model(&ModelSpec::default_remote(), &ModelOptions::default(), &no_env)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "DEEPSEEK_API_KEY is not set: export it, or pick another model with --model openai:NAME, \
         --model demo or --model script:FILE"
    );
    let spec = ModelSpec::parse("openai:gpt-4o").unwrap();
    let err = open_model(&spec, &ModelOptions::default(), &|_: &str| Some(" ".into()))
        .err()
        .unwrap();
    assert!(err.to_string().starts_with("OPENAI_API_KEY is not set"), "{err}");
}

#[test]
fn a_configured_key_variable_is_the_one_read_and_named() {
    let opts = ModelOptions {
        api_key_env: Some("MY_KEY".into()),
        ..ModelOptions::default()
    };
    let err = open_model(&ModelSpec::default_remote(), &opts, &no_env)
        .err()
        .unwrap();
    assert!(err.to_string().starts_with("MY_KEY is not set"), "{err}");
    let env = |v: &str| (v == "MY_KEY").then(|| "sk-1".to_string());
    let model = open_model(&ModelSpec::default_remote(), &opts, &env).unwrap();
    assert_eq!(model.describe(), "deepseek:deepseek-chat");
}

#[test]
fn a_custom_base_url_needs_no_key_and_is_described() {
    let opts = ModelOptions {
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        ..ModelOptions::default()
    };
    let model = open_model(&ModelSpec::parse("openai:local").unwrap(), &opts, &no_env).unwrap();
    assert_eq!(model.describe(), "openai:local at http://127.0.0.1:8080/v1");
    let bad = ModelOptions {
        base_url: Some("localhost:8080".into()),
        ..ModelOptions::default()
    };
    let err = open_model(&ModelSpec::default_remote(), &bad, &no_env)
        .err()
        .unwrap();
    assert!(matches!(err, ModelError::BadBaseUrl { .. }), "{err}");
}

#[test]
fn offline_models_open_without_a_key() {
    let model = open_model(&ModelSpec::Demo, &ModelOptions::default(), &no_env).unwrap();
    assert_eq!(model.describe(), "demo");
    let err = open_model(
        &ModelSpec::Script("/nonexistent/s.json".into()),
        &ModelOptions::default(),
        &no_env,
    )
    .err()
    .unwrap();
    assert!(
        err.to_string()
            .starts_with("cannot read script `/nonexistent/s.json`"),
        "{err}"
    );
}

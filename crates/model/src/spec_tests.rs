use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

#[test]
fn a_missing_key_names_the_variable_and_the_alternatives() {
    let err = open_model(&ModelSpec::default_remote(), &ModelOptions::default(), &no_env)
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "DEEPSEEK_API_KEY is not set: export it, or pick another model: openai:NAME, demo or \
         script:FILE"
    );
    let spec = ModelSpec::parse("openai:gpt-4o").unwrap();
    let err = open_model(&spec, &ModelOptions::default(), &|_: &str| Some(" ".into()))
        .err()
        .unwrap();
    assert!(err.to_string().starts_with("OPENAI_API_KEY is not set"), "{err}");
}

#[test]
fn a_configured_key_variable_is_the_one_read_and_named() {
    let opts = ModelOptions::default();
    let spec = ModelSpec {
        api_key_env: Some("MY_KEY".into()),
        ..ModelSpec::default_remote()
    };
    let err = open_model(&spec, &opts, &no_env).err().unwrap();
    assert!(err.to_string().starts_with("MY_KEY is not set"), "{err}");
    let env = |v: &str| (v == "MY_KEY").then(|| "sk-1".to_string());
    let model = open_model(&spec, &opts, &env).unwrap();
    assert_eq!(model.describe(), "deepseek:deepseek-chat");
}

#[test]
fn a_custom_base_url_needs_no_key_and_is_described() {
    let opts = ModelOptions::default();
    let spec = ModelSpec {
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        ..ModelSpec::parse("openai:local").unwrap()
    };
    let model = open_model(&spec, &opts, &no_env).unwrap();
    assert_eq!(model.describe(), "openai:local at http://127.0.0.1:8080/v1");
    let bad = ModelSpec {
        base_url: Some("localhost:8080".into()),
        ..ModelSpec::default_remote()
    };
    let err = open_model(&bad, &opts, &no_env).err().unwrap();
    assert!(matches!(err, ModelError::BadBaseUrl { .. }), "{err}");
}

#[test]
fn offline_models_open_without_a_key() {
    let model = open_model(&ModelSpec::demo(), &ModelOptions::default(), &no_env).unwrap();
    assert_eq!(model.describe(), "demo");
    let err = open_model(
        &ModelSpec::script("/nonexistent/s.json"),
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

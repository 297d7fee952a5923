//! The crate layering of ARCHITECTURE.md, checked against `cargo metadata` so it cannot erode.

use std::collections::BTreeMap;
use std::process::Command;

use serde_json::Value;

/// Layer of each crate; a crate may depend only on strictly lower layers (dev-dependencies excepted).
fn layer(name: &str) -> Option<u8> {
    Some(match name {
        "retrace-protocol" | "retrace-fsutil" | "retrace-diff" => 0,
        "retrace-checkpoint" | "retrace-gitstore" | "retrace-session" | "retrace-tools" | "retrace-model"
        | "retrace-mcp" => 1,
        "retrace-agent" => 2,
        // The web UI's files are a leaf (no dependencies) below the server that serves them.
        "retrace-control" | "retrace-web" => 3,
        "retrace-server" | "retrace-tui" => 4,
        "retrace-cli" => 5,
        "retrace-testkit" | "retrace-bench" => 6,
        _ => return None,
    })
}

#[test]
fn dependencies_point_down_only() {
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pkg in meta["packages"].as_array().unwrap() {
        let name = pkg["name"].as_str().unwrap().to_string();
        assert!(
            layer(&name).is_some(),
            "crate {name} has no layer: add it to ARCHITECTURE.md and this test"
        );
        for dep in pkg["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            if dep_name.starts_with("retrace-") && dep["kind"].is_null() {
                edges.entry(name.clone()).or_default().push(dep_name.to_string());
            }
        }
    }
    // Frontends (and the binary, which is one) talk to the controller's handle and protocol types
    // only: everything below is the controller's business.
    let frontends = ["retrace-server", "retrace-tui", "retrace-cli"];
    for (from, tos) in &edges {
        for to in tos {
            let (lf, lt) = (layer(from).unwrap(), layer(to).unwrap());
            assert!(lt < lf, "forbidden edge {from} (layer {lf}) -> {to} (layer {lt})");
            if frontends.contains(&from.as_str()) {
                let allowed: &[&str] = match from.as_str() {
                    "retrace-cli" => &[
                        "retrace-control",
                        "retrace-protocol",
                        "retrace-tui",
                        "retrace-server",
                    ],
                    _ => &["retrace-control", "retrace-protocol", "retrace-web"],
                };
                assert!(
                    allowed.contains(&to.as_str()),
                    "frontend {from} must talk only to control and protocol, not {to}"
                );
            }
        }
    }
    let cli: Vec<&str> = edges["retrace-cli"].iter().map(String::as_str).collect();
    assert!(
        cli.contains(&"retrace-control") && cli.contains(&"retrace-protocol"),
        "{cli:?}"
    );
    // anyhow is for the binary only.
    for pkg in meta["packages"].as_array().unwrap() {
        let name = pkg["name"].as_str().unwrap();
        if name == "retrace-cli" || name == "retrace-bench" {
            continue;
        }
        let uses_anyhow = pkg["dependencies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["name"] == "anyhow" && d["kind"].is_null());
        assert!(
            !uses_anyhow,
            "{name} uses anyhow; library crates use their own thiserror enum"
        );
    }
}

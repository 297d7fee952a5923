//! The web UI's JavaScript modules as files: every module under `assets/` is embedded, every
//! import names an embedded module of the page (no build step, nothing from elsewhere), imports
//! never go round in a circle, and every module is reached from the entry `app.js`. Then the
//! unit tests under `tests/unit/` in node (the head tree's shape); without node they say so and
//! pass, unless `CI` is set, where they fail.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// The embedded modules and what each imports.
fn imports() -> BTreeMap<&'static str, Vec<String>> {
    retrace_web::FILES
        .iter()
        .filter(|(p, _)| p.ends_with(".js"))
        .map(|(p, a)| (*p, specifiers(std::str::from_utf8(a.bytes).unwrap())))
        .collect()
}

/// The specifiers of a module's `import` statements (`import … from "x"`, `import "x"`, and a
/// multi-line import's closing `} from "x"`).
fn specifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().map(str::trim_start) {
        let rest = if line.starts_with("import ") || line.starts_with("} from ") {
            line.rsplit_once(" from ")
                .map(|(_, r)| r)
                .or_else(|| line.strip_prefix("import "))
        } else {
            None
        };
        let quoted = rest.map(|r| r.trim_end().trim_end_matches(';'));
        if let Some(q) = quoted.filter(|q| q.starts_with(['"', '\'']) && q.len() > 1) {
            out.push(q[1..q.len() - 1].to_string());
        }
    }
    out
}

#[test]
fn every_module_under_assets_is_embedded() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".js") {
            assert!(
                retrace_web::asset(&name).is_some(),
                "assets/{name} is not in retrace_web::FILES: the page would not find it"
            );
        }
    }
}

#[test]
fn imports_name_embedded_modules_go_one_way_and_reach_every_module() {
    let graph = imports();
    assert!(graph.contains_key("app.js"));
    for (m, deps) in &graph {
        for d in deps {
            let name = d
                .strip_prefix("./")
                .unwrap_or_else(|| panic!("{m} imports {d:?}: only the page's own modules (\"./name.js\")"));
            assert!(graph.contains_key(name), "{m} imports {d}, which is not embedded");
        }
    }
    // Depth first from app.js: a module met again while on the path is a circle.
    fn visit<'a>(
        m: &'a str,
        graph: &'a BTreeMap<&'static str, Vec<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("imports go round: {} → {m}", path[i..].join(" → "));
        }
        if done.contains(m) {
            return;
        }
        path.push(m);
        for d in &graph[m] {
            visit(&d[2..], graph, path, done);
        }
        path.pop();
        done.insert(m);
    }
    let mut done = BTreeSet::new();
    visit("app.js", &graph, &mut Vec::new(), &mut done);
    let unused: Vec<_> = graph.keys().filter(|m| !done.contains(*m)).collect();
    assert!(unused.is_empty(), "modules app.js never imports: {unused:?}");
}

#[test]
fn the_import_reader_sees_every_form() {
    let text = "import { a } from \"./a.js\";\nimport \"./b.js\";\nimport {\n  c,\n} from './c.js';\nconst x = \"import y from z\";\n";
    assert_eq!(specifiers(text), ["./a.js", "./b.js", "./c.js"]);
}

#[test]
fn the_unit_tests_pass_in_node() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let node = Command::new("node").arg("--version").output();
    if !node.map(|o| o.status.success()).unwrap_or(false) {
        assert!(
            std::env::var_os("CI").is_none(),
            "the web UI's unit tests cannot run in CI: node is not installed"
        );
        eprintln!("skipping the web UI's unit tests: node is not installed");
        return;
    }
    let mut tests: Vec<_> = std::fs::read_dir(dir.join("tests/unit"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.mjs"))
        .collect();
    tests.sort();
    assert!(!tests.is_empty());
    let out = Command::new("node")
        .arg("--test")
        .args(&tests)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "node --test failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

//! The crate's modules import one way (CONTRIBUTING.md "Layout", `src/lib.rs`): each group of
//! `mod` lines in `lib.rs` is a layer, a module names (`crate::<module>`) only modules of its own
//! layer or those below it, and no modules name each other in a circle. Test modules are not
//! counted.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Each module of `lib.rs` with its layer: the number of its group of `mod` lines, from 0.
fn layers(src: &Path) -> BTreeMap<String, usize> {
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut out = BTreeMap::new();
    let mut group = 0;
    let mut in_group = false;
    for line in lib.lines() {
        let name = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|r| r.strip_suffix(';'));
        match name {
            Some(name) => {
                out.insert(name.to_string(), group);
                in_group = true;
            }
            None if in_group && line.trim().is_empty() => {
                group += 1;
                in_group = false;
            }
            None => {}
        }
    }
    out
}

/// The modules `text` names as `crate::<module>`.
fn named(text: &str) -> BTreeSet<String> {
    text.match_indices("crate::")
        .map(|(i, m)| {
            text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect::<String>()
        })
        .collect()
}

#[test]
fn modules_import_only_their_layer_and_those_below_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let layer = layers(&src);
    assert!(layer.values().max().is_some_and(|m| *m >= 2), "{layer:?}");
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, l) in &layer {
        let text = fs::read_to_string(src.join(format!("{module}.rs"))).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        let deps: BTreeSet<String> = named(code)
            .into_iter()
            .filter(|d| d != module && layer.contains_key(d))
            .collect();
        for d in &deps {
            assert!(
                layer[d] <= *l,
                "`{module}` (layer {l}) names `crate::{d}` (layer {}), a layer above it",
                layer[d]
            );
        }
        edges.insert(module.clone(), deps);
    }
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut todo: Vec<&String> = edges[start].iter().collect();
        while let Some(m) = todo.pop() {
            assert!(
                m != start,
                "`{start}` names itself through a circle of modules: {edges:?}"
            );
            if seen.insert(m) {
                todo.extend(edges[m].iter());
            }
        }
    }
}

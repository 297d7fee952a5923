//! The tools offered to the model, from what every server listed: each as `mcp__SERVER__TOOL`,
//! unless it is left out, saying why: a name a model API refuses, an input schema that is no
//! object schema (or that the client could not read), a name another tool has too (two tools, of
//! one server or of two, that would be offered by the same name: neither is, so a call never goes
//! to the wrong one), or past the server's limits on how many tools and how many bytes of
//! definitions it may add to every request. A tool left out cannot be called.

use std::collections::HashMap;

use retrace_protocol::McpServerConfig;
use rmcp::model::Tool;
use serde_json::Value;

use crate::listing::Skipped;

/// The prefix of the names MCP tools are offered by.
pub const TOOL_PREFIX: &str = "mcp__";

/// At most this many tools of one server are offered (model APIs take about a hundred in all).
pub const MAX_TOOLS_PER_SERVER: usize = 100;

/// At most this many bytes of one server's tool definitions (names, descriptions and schemas, as
/// sent with every request) are offered.
pub const MAX_TOOL_BYTES_PER_SERVER: usize = 200_000;

/// One tool as the model is offered it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's name in the config.
    pub server: String,
    /// The server's name of the tool.
    pub tool: String,
    /// `mcp__SERVER__TOOL`.
    pub qualified: String,
    /// What it does.
    pub description: String,
    /// The JSON schema of its arguments.
    pub schema: serde_json::Value,
    /// The server marks it read-only (`readOnlyHint`): its own claim, unchecked.
    pub read_only: bool,
    /// The config vouches that it changes nothing (`read_only_tools`, or
    /// `trust_read_only_hints` and the server's mark): offered in plan mode, no gap.
    pub vouched: bool,
}

/// A tool a server listed that is not offered, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// The server's name in the config.
    pub server: String,
    /// The server's name of the tool.
    pub tool: String,
    /// Why, in words (`its input schema is not a JSON object`).
    pub why: String,
}

/// The name a tool is offered by.
pub fn qualified_name(server: &str, tool: &str) -> String {
    format!("{TOOL_PREFIX}{server}__{tool}")
}

/// Whether the server marks `t` read-only (`readOnlyHint`).
pub(crate) fn hinted_read_only(t: &Tool) -> bool {
    t.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

/// What one server listed, for the catalog.
pub(crate) struct Listing<'a> {
    pub(crate) server: &'a str,
    pub(crate) config: &'a McpServerConfig,
    pub(crate) tools: &'a [Tool],
    pub(crate) skipped: &'a [Skipped],
}

/// The tools offered and those left out, from every server's listing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    pub(crate) offered: Vec<McpTool>,
    pub(crate) left_out: Vec<LeftOut>,
    /// Names in a server's `tool_permissions` or `read_only_tools` that name none of the tools it
    /// listed, in words (a misspelt name would otherwise be ignored without a word).
    pub(crate) unmatched: Vec<String>,
}

/// What a server's `tool_permissions` and `read_only_tools` name that it does not list, in
/// words; nothing for a server that listed no tool (it may not have started).
fn unmatched_names(l: &Listing<'_>) -> Option<String> {
    if l.tools.is_empty() && l.skipped.is_empty() {
        return None;
    }
    let listed = |name: &str| {
        let known = |t: &str| name == t || name == qualified_name(l.server, t);
        l.tools.iter().any(|t| known(&t.name)) || l.skipped.iter().any(|s| known(&s.name))
    };
    let mut parts = Vec::new();
    for (field, names) in [
        (
            "tool_permissions",
            l.config.tool_permissions.keys().collect::<Vec<_>>(),
        ),
        ("read_only_tools", l.config.read_only_tools.iter().collect()),
    ] {
        let unknown: Vec<String> = names
            .into_iter()
            .filter(|n| !listed(n))
            .map(|n| format!("`{n}`"))
            .collect();
        if !unknown.is_empty() {
            parts.push(format!("`{field}` names {}", unknown.join(", ")));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut tools: Vec<String> = l.tools.iter().take(8).map(|t| format!("`{}`", t.name)).collect();
    if l.tools.len() > 8 {
        tools.push(format!("and {} more", l.tools.len() - 8));
    }
    Some(format!(
        "in `[mcp_servers.{}]`, {}, which the server does not list, so it applies to no tool: check the spelling (its tools: {})",
        l.server,
        parts.join("; "),
        tools.join(", ")
    ))
}

/// Whether a model API takes `name` as a tool's name (at most 64 of `A-Za-z0-9_-`).
fn offerable(name: &str) -> bool {
    name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// What is wrong with an input schema for a model API, if anything: it must be an object schema.
fn schema_problem(schema: &serde_json::Map<String, Value>) -> Option<String> {
    match schema.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => return Some(format!("its input schema's `type` is {other}, not \"object\"")),
    }
    match schema.get("properties") {
        Some(p) if !p.is_object() => Some("its input schema's `properties` is not an object".into()),
        _ => None,
    }
}

/// A tool's definition as the model is offered it, as McpTool.
fn offered(l: &Listing<'_>, t: &Tool) -> McpTool {
    let read_only = hinted_read_only(t);
    McpTool {
        server: l.server.to_string(),
        tool: t.name.to_string(),
        qualified: qualified_name(l.server, &t.name),
        description: t.description.as_deref().unwrap_or_default().to_string(),
        schema: Value::Object((*t.input_schema).clone()),
        read_only,
        vouched: l.config.vouches_read_only(l.server, &t.name, read_only),
    }
}

impl Catalog {
    /// The catalog of `listings`, in their order (servers by name, tools as listed).
    pub(crate) fn of(listings: &[Listing<'_>]) -> Catalog {
        let mut out = Catalog::default();
        let mut candidates: Vec<McpTool> = Vec::new();
        for l in listings {
            out.unmatched.extend(unmatched_names(l));
            for s in l.skipped {
                out.left_out.push(LeftOut {
                    server: l.server.to_string(),
                    tool: s.name.clone(),
                    why: s.why.clone(),
                });
            }
            for t in l.tools {
                let tool = offered(l, t);
                let why = if !offerable(&tool.qualified) {
                    Some(format!(
                        "its name `{}` is not one a model API takes (at most 64 letters, digits, `_` and `-`)",
                        tool.qualified
                    ))
                } else {
                    schema_problem(&t.input_schema)
                };
                match why {
                    Some(why) => out.left_out.push(LeftOut {
                        server: tool.server,
                        tool: tool.tool,
                        why,
                    }),
                    None => candidates.push(tool),
                }
            }
        }
        // A name two tools would be offered by: neither is, so no call goes to the wrong one.
        let mut by_name: HashMap<&str, Vec<(&str, &str)>> = HashMap::new();
        for t in &candidates {
            by_name
                .entry(t.qualified.as_str())
                .or_default()
                .push((t.server.as_str(), t.tool.as_str()));
        }
        let mut shared: HashMap<String, String> = HashMap::new();
        for (name, owners) in &by_name {
            if owners.len() < 2 {
                continue;
            }
            let mut whose: Vec<String> = owners.iter().map(|(s, t)| format!("`{t}` of `{s}`")).collect();
            whose.dedup();
            shared.insert(
                name.to_string(),
                format!(
                    "{} tools would be offered as `{name}` ({}): none of them is",
                    owners.len(),
                    whose.join(", ")
                ),
            );
        }
        // Each server's limits, over the tools that are left.
        let mut used: HashMap<String, (usize, usize)> = HashMap::new();
        for t in candidates {
            if let Some(why) = shared.get(&t.qualified) {
                out.left_out.push(LeftOut {
                    server: t.server,
                    tool: t.tool,
                    why: why.clone(),
                });
                continue;
            }
            let bytes = t.qualified.len() + t.description.len() + t.schema.to_string().len();
            let (count, size) = used.entry(t.server.clone()).or_default();
            if *count >= MAX_TOOLS_PER_SERVER || *size + bytes > MAX_TOOL_BYTES_PER_SERVER {
                out.left_out.push(LeftOut {
                    server: t.server,
                    tool: t.tool,
                    why: format!(
                        "past what one server may offer ({MAX_TOOLS_PER_SERVER} tools, {} KB of definitions)",
                        MAX_TOOL_BYTES_PER_SERVER / 1000
                    ),
                });
                continue;
            }
            *count += 1;
            *size += bytes;
            out.offered.push(t);
        }
        out
    }

    /// What is left out, in words: one line per server that has tools left out, naming them with
    /// why (at most a few of each reason, then how many more).
    pub(crate) fn notices(&self) -> Vec<String> {
        let mut servers: Vec<&str> = Vec::new();
        for l in &self.left_out {
            if !servers.contains(&l.server.as_str()) {
                servers.push(&l.server);
            }
        }
        servers
            .into_iter()
            .map(|server| {
                let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
                for l in self.left_out.iter().filter(|l| l.server == server) {
                    match reasons.iter_mut().find(|(w, _)| *w == l.why) {
                        Some((_, tools)) => tools.push(&l.tool),
                        None => reasons.push((&l.why, vec![&l.tool])),
                    }
                }
                let parts: Vec<String> = reasons
                    .iter()
                    .map(|(why, tools)| {
                        let mut names: Vec<String> =
                            tools.iter().take(5).map(|t| format!("`{t}`")).collect();
                        if tools.len() > 5 {
                            names.push(format!("and {} more", tools.len() - 5));
                        }
                        format!("{} ({why})", names.join(", "))
                    })
                    .collect();
                format!(
                    "the MCP server `{server}` has tools that are left out, not offered to the model: {}; `retrace mcp list` shows them",
                    parts.join("; ")
                )
            })
            .chain(self.unmatched.iter().cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: Value) -> Tool {
        serde_json::from_value(serde_json::json!({"name": name, "inputSchema": schema})).unwrap()
    }

    fn object() -> Value {
        serde_json::json!({"type": "object", "properties": {}})
    }

    /// Found by an attack: a tool listed twice, and two servers whose names met at an
    /// underscore (`a` + `_b`, `a_` + `b`), were offered under one name, and a call of it went to
    /// the first, past the other's `deny`.
    #[test]
    fn tools_sharing_a_name_are_all_left_out() {
        let config = McpServerConfig::default();
        let a = [
            tool("_b", object()),
            tool("echo", object()),
            tool("echo", object()),
        ];
        let a_ = [tool("b", object()), tool("c", object())];
        let catalog = Catalog::of(&[
            Listing {
                server: "a",
                config: &config,
                tools: &a,
                skipped: &[],
            },
            Listing {
                server: "a_",
                config: &config,
                tools: &a_,
                skipped: &[],
            },
        ]);
        let names: Vec<&str> = catalog.offered.iter().map(|t| t.qualified.as_str()).collect();
        assert_eq!(names, ["mcp__a___c"]);
        let out: Vec<(&str, &str)> = catalog
            .left_out
            .iter()
            .map(|l| (l.server.as_str(), l.tool.as_str()))
            .collect();
        assert_eq!(out, [("a", "_b"), ("a", "echo"), ("a", "echo"), ("a_", "b")]);
        assert!(
            catalog.left_out[0].why.contains("`_b` of `a`, `b` of `a_`"),
            "{:?}",
            catalog.left_out[0]
        );
        assert!(catalog.left_out[1]
            .why
            .starts_with("2 tools would be offered as `mcp__a__echo`"));
    }

    /// Found by an attack: a schema that is no object schema went to the model as it was (a
    /// strict API refuses the whole request); a name too long or with other characters is left out.
    #[test]
    fn bad_names_and_schemas_are_left_out_saying_why() {
        let config = McpServerConfig::default();
        let tools = [
            tool("odd", serde_json::json!({"type": "strng", "properties": 5})),
            tool("props", serde_json::json!({"type": "object", "properties": 5})),
            tool(&"x".repeat(70), object()),
            tool("écho", object()),
            tool("fine", serde_json::json!({})),
        ];
        let skipped = [Skipped {
            name: "bad".into(),
            why: "its input schema is not a JSON object".into(),
        }];
        let catalog = Catalog::of(&[Listing {
            server: "evil",
            config: &config,
            tools: &tools,
            skipped: &skipped,
        }]);
        assert_eq!(catalog.offered.len(), 1);
        assert_eq!(catalog.offered[0].tool, "fine");
        let why: Vec<&str> = catalog.left_out.iter().map(|l| l.why.as_str()).collect();
        assert_eq!(why[0], "its input schema is not a JSON object");
        assert_eq!(why[1], "its input schema's `type` is \"strng\", not \"object\"");
        assert_eq!(why[2], "its input schema's `properties` is not an object");
        assert!(why[3].contains("is not one a model API takes"), "{why:?}");
        let notices = catalog.notices();
        assert_eq!(notices.len(), 1);
        assert!(
            notices[0].starts_with("the MCP server `evil` has tools that are left out"),
            "{notices:?}"
        );
        assert!(notices[0].contains("`bad` (its input schema is not a JSON object)"));
    }

    /// Found by an attack: 2,000 tools of 5 KB each went with every request (10 MB).
    #[test]
    fn a_server_offers_at_most_its_share_of_tools() {
        let config = McpServerConfig::default();
        let mut many: Vec<Tool> = (0..150).map(|i| tool(&format!("t{i}"), object())).collect();
        let catalog = Catalog::of(&[Listing {
            server: "s",
            config: &config,
            tools: &many,
            skipped: &[],
        }]);
        assert_eq!(catalog.offered.len(), MAX_TOOLS_PER_SERVER);
        assert_eq!(catalog.left_out.len(), 50);
        assert_eq!(catalog.left_out[0].tool, "t100");
        let notice = &catalog.notices()[0];
        assert!(
            notice.contains(
                "`t100`, `t101`, `t102`, `t103`, `t104`, and 45 more (past what one server may offer"
            ),
            "{notice}"
        );
        for t in &mut many {
            t.description = Some("d".repeat(5000).into());
        }
        let catalog = Catalog::of(&[Listing {
            server: "s",
            config: &config,
            tools: &many,
            skipped: &[],
        }]);
        let offered = catalog.offered.len();
        assert!(offered < 40 && offered > 30, "{offered}");
    }

    /// Found by a second attack: a `tool_permissions` entry with a misspelt name was ignored
    /// without a word (the tool it meant kept the server's permission).
    #[test]
    fn names_in_the_config_that_the_server_does_not_list_are_said() {
        use retrace_protocol::McpPermission;
        let mut config = McpServerConfig::default();
        config
            .tool_permissions
            .insert("mcp__s__echo".into(), McpPermission::Deny);
        config.tool_permissions.insert("ecko".into(), McpPermission::Deny);
        config.read_only_tools = vec!["echo".into(), "serch".into()];
        let tools = [tool("echo", object()), tool("search", object())];
        let listing = |tools| Listing {
            server: "s",
            config: &config,
            tools,
            skipped: &[],
        };
        let catalog = Catalog::of(&[listing(&tools)]);
        assert_eq!(catalog.unmatched.len(), 1, "{:?}", catalog.unmatched);
        let said = &catalog.notices()[0];
        assert!(said.contains("`tool_permissions` names `ecko`"), "{said}");
        assert!(said.contains("`read_only_tools` names `serch`"), "{said}");
        assert!(said.contains("its tools: `echo`, `search`"), "{said}");
        assert!(!said.contains("`mcp__s__echo`"), "{said}");
        // A server that listed nothing (not started) is not judged.
        assert!(Catalog::of(&[listing(&[])]).unmatched.is_empty());
    }
}

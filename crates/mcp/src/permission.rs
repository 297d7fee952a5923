//! Whether a call of a server's tool, or a request for its resources, runs, is asked about or is
//! refused, and the setting of the config that says so (named in a refusal, so the user knows
//! what to change).

use retrace_protocol::McpPermission;

use crate::servers::McpServers;

/// A permission and the setting it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// What the config says.
    pub permission: McpPermission,
    /// The setting that says it, in words (`` `permission = "ask"` of `[mcp_servers.fs]` ``).
    pub setting: String,
}

/// A permission's name in the config.
pub fn permission_word(p: McpPermission) -> &'static str {
    match p {
        McpPermission::Ask => "ask",
        McpPermission::Allow => "allow",
        McpPermission::Deny => "deny",
    }
}

impl McpServers {
    /// Whether a call of `tool` (the server's name of it) on `server` runs, is asked about or is
    /// refused: its `tool_permissions` entry (by its name or its full name `mcp__SERVER__TOOL`),
    /// else the server's `permission`, else `[permissions] mcp`. An unknown server is denied.
    pub fn decide(&self, server: &str, tool: &str) -> Decision {
        let Some(config) = self.config_of(server) else {
            return Decision {
                permission: McpPermission::Deny,
                setting: format!("there is no MCP server `{server}`"),
            };
        };
        let full = crate::qualified_name(server, tool);
        // Both names may have an entry: the stricter one holds (deny, then ask, then allow), so
        // that a second key never turns a `deny` into `allow`.
        let strictness = |p: McpPermission| match p {
            McpPermission::Deny => 2,
            McpPermission::Ask => 1,
            McpPermission::Allow => 0,
        };
        let strictest = [full.as_str(), tool]
            .into_iter()
            .filter_map(|key| config.tool_permissions.get(key).map(|p| (key, *p)))
            .max_by_key(|(_, p)| strictness(*p));
        if let Some((key, p)) = strictest {
            return Decision {
                permission: p,
                setting: format!(
                    "`tool_permissions = {{ \"{key}\" = \"{}\" }}` of `[mcp_servers.{server}]`",
                    permission_word(p)
                ),
            };
        }
        self.decide_server(server)
    }

    /// Whether `server` is asked for its resources (listed or read): the server's `permission`,
    /// else `[permissions] mcp` (resources are no tool: `tool_permissions` do not apply).
    pub fn decide_server(&self, server: &str) -> Decision {
        let Some(config) = self.config_of(server) else {
            return Decision {
                permission: McpPermission::Deny,
                setting: format!("there is no MCP server `{server}`"),
            };
        };
        match config.permission {
            Some(p) => Decision {
                permission: p,
                setting: format!(
                    "`permission = \"{}\"` of `[mcp_servers.{server}]`",
                    permission_word(p)
                ),
            },
            None => {
                let all = self.default_permission();
                Decision {
                    permission: all,
                    setting: match all {
                        McpPermission::Ask => {
                            "`[permissions] mcp`, `ask` unless the config says otherwise".to_string()
                        }
                        p => format!("`[permissions] mcp = \"{}\"`", permission_word(p)),
                    },
                }
            }
        }
    }

    /// Whether a call of `tool` on `server` runs, is asked about or is refused ([`McpServers::decide`]).
    pub fn permission(&self, server: &str, tool: &str) -> McpPermission {
        self.decide(server, tool).permission
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use retrace_protocol::McpServerConfig;

    use super::*;

    fn servers(config: McpServerConfig, all: McpPermission) -> McpServers {
        McpServers::new(
            BTreeMap::from([("evil".to_string(), config)]),
            PathBuf::from("/"),
            Vec::new(),
            std::sync::Arc::new(|_| None),
            all,
        )
    }

    /// Found by an attack: `tool_permissions` keyed by the full name every frontend shows was
    /// ignored, and the tool ran.
    #[test]
    fn a_tool_permission_is_found_by_the_tools_name_or_its_full_name() {
        let config = McpServerConfig {
            command: Some("x".into()),
            tool_permissions: BTreeMap::from([
                ("mcp__evil__writer".to_string(), McpPermission::Deny),
                ("reader".to_string(), McpPermission::Allow),
            ]),
            ..Default::default()
        };
        let servers = servers(config, McpPermission::Ask);
        assert_eq!(servers.permission("evil", "writer"), McpPermission::Deny);
        assert_eq!(servers.permission("evil", "reader"), McpPermission::Allow);
        assert_eq!(servers.permission("evil", "other"), McpPermission::Ask);
        assert_eq!(servers.permission("nobody", "writer"), McpPermission::Deny);
        // Found by a second attack: two keys for one tool, the full name's `allow` won over the
        // short name's `deny`. The stricter holds, whichever name has it.
        for (deny, allow) in [("w", "mcp__evil__w"), ("mcp__evil__w", "w")] {
            let config = McpServerConfig {
                command: Some("x".into()),
                tool_permissions: BTreeMap::from([
                    (deny.to_string(), McpPermission::Deny),
                    (allow.to_string(), McpPermission::Allow),
                ]),
                ..Default::default()
            };
            let both = self::servers(config, McpPermission::Allow);
            assert_eq!(both.permission("evil", "w"), McpPermission::Deny);
        }
    }

    /// Found by an attack: a refusal named `[permissions] mcp` when the server's own
    /// `permission` said `ask`.
    #[test]
    fn each_decision_names_the_setting_it_comes_from() {
        let config = McpServerConfig {
            command: Some("x".into()),
            permission: Some(McpPermission::Ask),
            tool_permissions: BTreeMap::from([("w".to_string(), McpPermission::Deny)]),
            ..Default::default()
        };
        let s = servers(config.clone(), McpPermission::Deny);
        let d = s.decide("evil", "r");
        assert_eq!(d.permission, McpPermission::Ask);
        assert_eq!(d.setting, "`permission = \"ask\"` of `[mcp_servers.evil]`");
        assert_eq!(
            s.decide("evil", "w").setting,
            "`tool_permissions = { \"w\" = \"deny\" }` of `[mcp_servers.evil]`"
        );
        assert_eq!(s.decide_server("evil").permission, McpPermission::Ask);
        let unset = McpServerConfig {
            permission: None,
            ..config
        };
        let s = servers(unset.clone(), McpPermission::Ask);
        assert!(s.decide("evil", "r").setting.starts_with("`[permissions] mcp`"));
        let s = servers(unset, McpPermission::Allow);
        assert_eq!(s.decide("evil", "r").setting, "`[permissions] mcp = \"allow\"`");
    }
}

//! The set of tools offered to the model.

use crate::bash::Bash;
use crate::delete_file::DeleteFile;
use crate::dyn_tool::DynTool;
use crate::edit::{EditFile, MultiEdit};
use crate::glob::Glob;
use crate::grep::Grep;
use crate::list_dir::ListDir;
use crate::move_file::MoveFile;
use crate::read_file::ReadFile;
use crate::tool::ToolSpec;
use crate::write_file::WriteFile;

/// Tools by name, in the order they are offered.
pub struct Registry {
    tools: Vec<Box<dyn DynTool>>,
}

impl Registry {
    /// Every tool of SPEC §8: the read tools, the edit tools and `bash`.
    pub fn standard() -> Registry {
        Registry::empty()
            .with(Box::new(ReadFile))
            .with(Box::new(ListDir))
            .with(Box::new(Glob))
            .with(Box::new(Grep))
            .with(Box::new(WriteFile))
            .with(Box::new(EditFile))
            .with(Box::new(MultiEdit))
            .with(Box::new(MoveFile))
            .with(Box::new(DeleteFile))
            .with(Box::new(Bash))
    }

    /// No tools.
    pub fn empty() -> Registry {
        Registry { tools: Vec::new() }
    }

    /// This registry with `tool` added, replacing a tool of the same name.
    pub fn with(mut self, tool: Box<dyn DynTool>) -> Registry {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
        self
    }

    /// This registry without the tool called `name` (e.g. `bash` when shell is disabled).
    pub fn without(mut self, name: &str) -> Registry {
        self.tools.retain(|t| t.name() != name);
        self
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&dyn DynTool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| t.as_ref())
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }

    /// What the model is told about each tool.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().to_string(),
                description: t.description().to_string(),
                parameters: t.parameters(),
            })
            .collect()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::standard()
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").field("tools", &self.names()).finish()
    }
}

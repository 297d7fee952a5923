//! [`DynTool`]: a [`Tool`] behind a pointer, taking its arguments as JSON, so a [`Registry`] can
//! hold tools of different argument types and callers can use any of them by name.
//!
//! [`Registry`]: crate::Registry

use serde_json::Value;

use crate::args::{parse, ToolArgs};
use crate::describe::Title;
use crate::error::Result;
use crate::tool::{Preview, RunContext, Tool, ToolOutput};
use crate::workspace::Workspace;

mod sealed {
    /// Only [`crate::Tool`]s are [`super::DynTool`]s.
    pub trait Sealed {}
    impl<T: crate::Tool> Sealed for T {}
}

/// A tool as the registry holds it: implemented for every [`Tool`] (and only for them), parsing
/// the JSON arguments of each call into the tool's [`Tool::Args`] before the tool sees them.
pub trait DynTool: Send + Sync + sealed::Sealed {
    /// The name the model calls it by.
    fn name(&self) -> &'static str;
    /// What it does, for the model.
    fn description(&self) -> &'static str;
    /// The JSON schema of its arguments.
    fn parameters(&self) -> Value;
    /// True for tools that never change the workspace (their preview is empty).
    fn read_only(&self) -> bool;
    /// The title and target of a call with `args` (never fails; see [`Tool::describe`]).
    fn describe(&self, args: &Value) -> Title;
    /// Parses `args` once (an `InvalidArguments` error names the field) into a call that can be
    /// previewed and run without parsing them again.
    fn prepare<'t>(&'t self, args: &Value) -> Result<Box<dyn PreparedCall + 't>>;
    /// Parses `args` (an `InvalidArguments` error names the field) and previews the call.
    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview>;
    /// Parses `args` and runs the call with its `preview` (see [`Tool::run`]).
    fn run(
        &self,
        ws: &Workspace,
        args: &Value,
        preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput>;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn description(&self) -> &'static str {
        T::DESCRIPTION
    }

    fn parameters(&self) -> Value {
        T::Args::schema()
    }

    fn read_only(&self) -> bool {
        T::READ_ONLY
    }

    fn describe(&self, args: &Value) -> Title {
        T::describe(args)
    }

    fn prepare<'t>(&'t self, args: &Value) -> Result<Box<dyn PreparedCall + 't>> {
        let args = parse::<T::Args>(T::NAME, args)?;
        Ok(Box::new(Prepared { tool: self, args }))
    }

    fn preview(&self, ws: &Workspace, args: &Value) -> Result<Preview> {
        let args = parse::<T::Args>(T::NAME, args)?;
        Tool::preview(self, ws, &args)
    }

    fn run(
        &self,
        ws: &Workspace,
        args: &Value,
        preview: &Preview,
        ctx: &RunContext<'_>,
    ) -> Result<ToolOutput> {
        let args = parse::<T::Args>(T::NAME, args)?;
        Tool::run(self, ws, &args, preview, ctx)
    }
}

/// A call whose arguments were parsed and checked: preview it, then run it.
pub trait PreparedCall: Send + Sync {
    /// The tool's name.
    fn name(&self) -> &'static str;
    /// Previews the call (see [`Tool::preview`]).
    fn preview(&self, ws: &Workspace) -> Result<Preview>;
    /// Runs the call with its `preview` (see [`Tool::run`]).
    fn run(&self, ws: &Workspace, preview: &Preview, ctx: &RunContext<'_>) -> Result<ToolOutput>;
}

/// A tool and the parsed arguments of one call.
struct Prepared<'t, T: Tool> {
    tool: &'t T,
    args: T::Args,
}

impl<T: Tool> PreparedCall for Prepared<'_, T> {
    fn name(&self) -> &'static str {
        T::NAME
    }

    fn preview(&self, ws: &Workspace) -> Result<Preview> {
        Tool::preview(self.tool, ws, &self.args)
    }

    fn run(&self, ws: &Workspace, preview: &Preview, ctx: &RunContext<'_>) -> Result<ToolOutput> {
        Tool::run(self.tool, ws, &self.args, preview, ctx)
    }
}

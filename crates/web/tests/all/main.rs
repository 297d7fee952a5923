//! Integration tests of the web UI's files without a browser: one test binary (`tests/all`), one
//! module per topic. The browser tests' scripts (`tests/browser/`) are driven by the CLI's tests;
//! the node unit tests (`tests/unit/`) are run by `modules`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod modules;
mod render_only;

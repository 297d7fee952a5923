//! Integration tests of the protocol crate: one test binary (`tests/all`), one module per topic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod doc_refs;
mod wire;

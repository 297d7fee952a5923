//! The web UI's static files (SPEC §9.2), embedded in the binary so `retrace serve` needs nothing
//! on disk. No build step: plain HTML, CSS and JavaScript modules under `assets/` (the page loads
//! `app.js` as a module, and the browser fetches what it imports; CONTRIBUTING.md lists them).
//!
//! The whole API is [`asset`]: a path as the browser asks for it (`index.html`, or a file served
//! under `/assets/`), and the bytes with their content type. The server maps `/` to
//! `index.html` and `/assets/{path}` to `path`; it adds the security headers
//! (`Content-Security-Policy: default-src 'self'`, so scripts and styles must be files, never
//! inline) and keeps the API token out of the page (an HttpOnly cookie).
//!
//! To add a file: put it under `assets/`, add one line to [`FILES`]. The list is explicit on
//! purpose: nothing is served that was not named here (`tests/all/modules.rs` fails on a module
//! under `assets/` that is not listed, or an import of one that is not). `assets/package.json` is
//! not served: it tells node that the `.js` files are ES modules (`node --check` in `.ci/run`, the
//! unit tests under `tests/unit/`).

/// One embedded file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    /// The file's bytes.
    pub bytes: &'static [u8],
    /// Its `Content-Type` (with `charset=utf-8` for text).
    pub content_type: &'static str,
}

const JS: &str = "text/javascript; charset=utf-8";

/// `(path, Asset)` for the file `assets/<path>`, of content type `$type`.
macro_rules! embed {
    ($path:literal, $type:expr) => {
        (
            $path,
            Asset {
                bytes: include_bytes!(concat!("../assets/", $path)),
                content_type: $type,
            },
        )
    };
}

/// Every embedded file: its path (relative to `assets/`) and the asset. `app.js` is the page's
/// entry module; the others are the modules it imports (`tests` checks that every import is here).
pub const FILES: &[(&str, Asset)] = &[
    embed!("index.html", "text/html; charset=utf-8"),
    embed!("style.css", "text/css; charset=utf-8"),
    embed!("favicon.svg", "image/svg+xml; charset=utf-8"),
    embed!("app.js", JS),
    embed!("api.js", JS),
    embed!("approvals.js", JS),
    embed!("banner.js", JS),
    embed!("changes.js", JS),
    embed!("checkpoints.js", JS),
    embed!("composer.js", JS),
    embed!("controls.js", JS),
    embed!("dialog.js", JS),
    embed!("entries.js", JS),
    embed!("filehistory.js", JS),
    embed!("filelink.js", JS),
    embed!("forkspace.js", JS),
    embed!("header.js", JS),
    embed!("heads.js", JS),
    embed!("history.js", JS),
    embed!("items.js", JS),
    embed!("live.js", JS),
    embed!("markdown.js", JS),
    embed!("menu.js", JS),
    embed!("messages.js", JS),
    embed!("rewind.js", JS),
    embed!("picker.js", JS),
    embed!("queue.js", JS),
    embed!("results.js", JS),
    embed!("sessions.js", JS),
    embed!("state.js", JS),
    embed!("syntax.js", JS),
    embed!("transcript.js", JS),
    embed!("turns.js", JS),
    embed!("ui.js", JS),
    embed!("util.js", JS),
    embed!("versions.js", JS),
    embed!("view.js", JS),
    embed!("words.js", JS),
    // the vendored libraries markdown.js and syntax.js use (crates/web/assets/vendor/README.md: versions, origin, licences)
    embed!("vendor/marked.esm.js", JS),
    embed!("vendor/purify.es.js", JS),
    // highlight.js and the languages syntax.js colours (the same README)
    embed!("vendor/highlight/core.js", JS),
    embed!("vendor/highlight/bash.min.js", JS),
    embed!("vendor/highlight/c.min.js", JS),
    embed!("vendor/highlight/cpp.min.js", JS),
    embed!("vendor/highlight/css.min.js", JS),
    embed!("vendor/highlight/diff.min.js", JS),
    embed!("vendor/highlight/go.min.js", JS),
    embed!("vendor/highlight/ini.min.js", JS),
    embed!("vendor/highlight/java.min.js", JS),
    embed!("vendor/highlight/javascript.min.js", JS),
    embed!("vendor/highlight/json.min.js", JS),
    embed!("vendor/highlight/markdown.min.js", JS),
    embed!("vendor/highlight/python.min.js", JS),
    embed!("vendor/highlight/rust.min.js", JS),
    embed!("vendor/highlight/sql.min.js", JS),
    embed!("vendor/highlight/typescript.min.js", JS),
    embed!("vendor/highlight/xml.min.js", JS),
    embed!("vendor/highlight/yaml.min.js", JS),
];

/// The file at `path` (relative to `assets/`, no leading `/`), if it is embedded.
pub fn asset(path: &str) -> Option<Asset> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, a)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_and_its_files_are_embedded_with_their_types() {
        let page = asset("index.html").unwrap();
        assert!(page.content_type.starts_with("text/html"));
        assert!(std::str::from_utf8(page.bytes).unwrap().contains("app.js"));
        assert!(asset("app.js")
            .unwrap()
            .content_type
            .starts_with("text/javascript"));
        assert!(asset("api.js")
            .unwrap()
            .content_type
            .starts_with("text/javascript"));
        assert!(asset("style.css").unwrap().content_type.starts_with("text/css"));
    }

    #[test]
    fn nothing_else_is_served() {
        for p in [
            "",
            "/index.html",
            "../Cargo.toml",
            "src/lib.rs",
            "assets/app.js",
            "package.json",
        ] {
            assert_eq!(asset(p), None, "{p}");
        }
    }
}

//! The web UI's static files (SPEC §9.2), embedded in the binary so `retrace serve` needs nothing
//! on disk. No build step: plain HTML, CSS and JavaScript modules under `assets/`.
//!
//! The whole API is [`asset`]: a path as the browser asks for it (`index.html`, or a file served
//! under `/assets/`), and the bytes with their content type. The server maps `/` to
//! `index.html` and `/assets/{path}` to `path`; it adds the security headers
//! (`Content-Security-Policy: default-src 'self'`, so scripts and styles must be files, never
//! inline) and keeps the API token out of the page (an HttpOnly cookie).
//!
//! To add a file: put it under `assets/`, add one line to [`FILES`]. The list is explicit on
//! purpose: nothing is served that was not named here.

/// One embedded file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Asset {
    /// The file's bytes.
    pub bytes: &'static [u8],
    /// Its `Content-Type` (with `charset=utf-8` for text).
    pub content_type: &'static str,
}

/// Every embedded file: its path (relative to `assets/`) and the asset.
pub const FILES: &[(&str, Asset)] = &[
    (
        "index.html",
        Asset {
            bytes: include_bytes!("../assets/index.html"),
            content_type: "text/html; charset=utf-8",
        },
    ),
    (
        "app.js",
        Asset {
            bytes: include_bytes!("../assets/app.js"),
            content_type: "text/javascript; charset=utf-8",
        },
    ),
    (
        "api.js",
        Asset {
            bytes: include_bytes!("../assets/api.js"),
            content_type: "text/javascript; charset=utf-8",
        },
    ),
    (
        "style.css",
        Asset {
            bytes: include_bytes!("../assets/style.css"),
            content_type: "text/css; charset=utf-8",
        },
    ),
    (
        "favicon.svg",
        Asset {
            bytes: include_bytes!("../assets/favicon.svg"),
            content_type: "image/svg+xml; charset=utf-8",
        },
    ),
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
        for p in ["", "/index.html", "../Cargo.toml", "src/lib.rs", "assets/app.js"] {
            assert_eq!(asset(p), None, "{p}");
        }
    }
}

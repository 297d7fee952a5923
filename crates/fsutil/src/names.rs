//! Names of files Retrace makes beside a user's file (temp files, parked deletes, recovery copies):
//! derived from the file's own name, and always short enough to create.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use crate::hash::sha256_bytes;

/// The longest file name the file systems Retrace runs on take (`NAME_MAX`).
pub const NAME_MAX: usize = 255;

/// `<dot><name>.<suffix>` (`dot` is `"."` for a hidden name, or `""`); when that would be longer
/// than [`NAME_MAX`] bytes, `<dot><h>.<suffix>` with `h` the first 16 hex digits of the SHA-256 of
/// the name's bytes. The name's bytes are kept as they are (non-UTF-8 names too).
pub fn sibling_name(dot: &str, name: &OsStr, suffix: &str) -> OsString {
    let name = name.as_bytes();
    let mut full = Vec::with_capacity(dot.len() + name.len() + suffix.len() + 1);
    full.extend_from_slice(dot.as_bytes());
    full.extend_from_slice(name);
    full.push(b'.');
    full.extend_from_slice(suffix.as_bytes());
    if full.len() > NAME_MAX {
        full = format!("{dot}{}.{suffix}", &sha256_bytes(name)[..16]).into_bytes();
    }
    OsStr::from_bytes(&full).to_os_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_get_a_short_hashed_sibling() {
        assert_eq!(sibling_name(".", OsStr::new("a.txt"), "tmp"), ".a.txt.tmp");
        let long = "x".repeat(250);
        let s = sibling_name(".", OsStr::new(&long), "retrace-00000001-deadbeef-0.tmp");
        assert!(s.len() <= NAME_MAX, "{}", s.len());
        assert!(s.to_string_lossy().starts_with('.'));
        let other = sibling_name(
            ".",
            OsStr::new(&"y".repeat(250)),
            "retrace-00000001-deadbeef-0.tmp",
        );
        assert_ne!(s, other);
        let raw = OsStr::from_bytes(b"caf\xe9");
        assert_eq!(sibling_name("", raw, "bak").as_bytes(), b"caf\xe9.bak");
    }
}

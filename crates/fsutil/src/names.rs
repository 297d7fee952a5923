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

/// The name of the edit tools' temp file for a file named `name`, made by process `pid` as its
/// `n`-th: `.<name>.retrace-<pid>-<n>.tmp` (see [`sibling_name`] for long names).
pub fn tool_temp_name(name: &OsStr, pid: u32, n: u64) -> OsString {
    sibling_name(".", name, &format!("retrace-{pid}-{n}.tmp"))
}

/// When `candidate` is exactly a name [`tool_temp_name`] gives for `name`, the process id it
/// carries: the temp file an interrupted write of that process left beside `name`.
pub fn tool_temp_owner(name: &OsStr, candidate: &OsStr) -> Option<u32> {
    let c = candidate.as_bytes();
    let rest = c.strip_suffix(b".tmp")?;
    // `.<name>.retrace-` or `.<hash>.retrace-`: find the last `.retrace-`, then `<pid>-<n>`.
    let at = rest.windows(9).rposition(|w| w == b".retrace-")?;
    let tail = std::str::from_utf8(&rest[at + 9..]).ok()?;
    let (pid, n) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    let (pid, n) = (pid.parse::<u32>().ok()?, n.parse::<u64>().ok()?);
    (tool_temp_name(name, pid, n) == candidate).then_some(pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_temp_names_are_recognised_exactly() {
        let name = OsStr::new("a.txt");
        let t = tool_temp_name(name, 4242, 7);
        assert_eq!(t, ".a.txt.retrace-4242-7.tmp");
        assert_eq!(tool_temp_owner(name, &t), Some(4242));
        assert_eq!(tool_temp_owner(OsStr::new("b.txt"), &t), None);
        assert_eq!(tool_temp_owner(name, OsStr::new(".a.txt.retrace-x-7.tmp")), None);
        assert_eq!(tool_temp_owner(name, OsStr::new(".a.txt.tmp")), None);
        let long = "y".repeat(250);
        let lt = tool_temp_name(OsStr::new(&long), 9, 1);
        assert!(lt.len() <= NAME_MAX);
        assert_eq!(tool_temp_owner(OsStr::new(&long), &lt), Some(9));
    }

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

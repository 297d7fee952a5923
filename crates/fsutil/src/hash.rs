//! Streaming SHA-256.

use std::io::{self, Read, Write};

use sha2::{Digest, Sha256};

/// The buffer size of every streaming copy: large enough for throughput, small enough that memory
/// stays flat whatever the file size.
pub const CHUNK: usize = 64 * 1024;

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}

/// True when `s` is 64 lowercase hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// SHA-256 of a byte slice, as lowercase hex.
pub fn sha256_bytes(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// SHA-256 and length of everything `r` yields, reading in fixed chunks.
pub fn hash_reader<R: Read>(mut r: R) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut len = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        len += n as u64;
    }
    Ok((hex(&hasher.finalize()), len))
}

/// What [`copy_hashed`] saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashedCopy {
    /// SHA-256 of every byte read.
    pub sha256: String,
    /// Bytes read.
    pub len: u64,
}

/// Copies `r` into `w` while hashing, in fixed chunks. When `w` is `None` the bytes are only hashed.
pub fn copy_hashed<R: Read, W: Write>(mut r: R, mut w: Option<&mut W>) -> io::Result<HashedCopy> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut len = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        hasher.update(&buf[..n]);
        if let Some(w) = w.as_mut() {
            w.write_all(&buf[..n])?;
        }
        len += n as u64;
    }
    Ok(HashedCopy {
        sha256: hex(&hasher.finalize()),
        len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digest() {
        assert_eq!(
            sha256_bytes(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let (h, n) = hash_reader(&b"abc"[..]).unwrap();
        assert_eq!(
            h,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(n, 3);
        assert!(is_sha256_hex(&h));
        assert!(!is_sha256_hex("ABC"));
    }

    #[test]
    fn copy_hashes_and_copies() {
        let data = vec![7u8; CHUNK * 2 + 5];
        let mut out = Vec::new();
        let c = copy_hashed(&data[..], Some(&mut out)).unwrap();
        assert_eq!(out, data);
        assert_eq!(c.len, data.len() as u64);
        assert_eq!(c.sha256, sha256_bytes(&data));
    }
}

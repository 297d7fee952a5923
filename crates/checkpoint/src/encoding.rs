//! The text encodings a legacy record's inline `content` may have to be re-encoded with (SPEC
//! §3.3): the reference implementation's encoding numbers and names, and WHATWG labels.

use crate::record::RawEncoding;

/// An encoding a legacy record can ask its inline text to be re-encoded with (SPEC §3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextEncoding {
    /// UTF-8 without a BOM.
    Utf8,
    /// UTF-8 with a BOM (`EF BB BF`).
    Utf8Bom,
    /// UTF-16LE with a BOM (`FF FE`).
    Utf16LeBom,
    /// UTF-16BE with a BOM (`FE FF`).
    Utf16BeBom,
    /// GB18030.
    Gb18030,
    /// Bytes that were neither UTF-8 nor GB18030, decoded lossily: the text cannot give them back.
    LossyUtf8,
    /// UTF-16LE without a BOM.
    Utf16Le,
    /// UTF-16BE without a BOM.
    Utf16Be,
    /// Any other WHATWG encoding that can encode (single-byte encodings, Shift_JIS, …).
    Whatwg(&'static encoding_rs::Encoding),
}

impl TextEncoding {
    /// The reference implementation's encoding number.
    fn of_kind(kind: i64) -> Option<TextEncoding> {
        Some(match kind {
            0 => TextEncoding::Utf8,
            1 => TextEncoding::Utf8Bom,
            2 => TextEncoding::Utf16LeBom,
            3 => TextEncoding::Utf16BeBom,
            4 => TextEncoding::Gb18030,
            5 => TextEncoding::LossyUtf8,
            6 => TextEncoding::Utf16Le,
            7 => TextEncoding::Utf16Be,
            _ => return None,
        })
    }

    /// What a name may mean, the likeliest first (empty when unknown). The names the reference
    /// implementation prints or parses come first (`utf-16le` means *with* a BOM there, so it may
    /// mean either), then WHATWG labels.
    fn of_name(name: &str) -> Vec<TextEncoding> {
        use TextEncoding::*;
        let n = name.trim().to_ascii_lowercase();
        match n.as_str() {
            "utf-8" | "utf8" => vec![Utf8],
            "utf-8 bom" | "utf8 bom" | "utf8bom" => vec![Utf8Bom],
            "utf-16 le" => vec![Utf16LeBom],
            "utf-16 be" => vec![Utf16BeBom],
            "utf-16le" | "utf16le" => vec![Utf16LeBom, Utf16Le],
            "utf-16be" | "utf16be" => vec![Utf16BeBom, Utf16Be],
            "utf-16 le (no bom)" | "utf-16le-nobom" | "utf16le-nobom" => vec![Utf16Le],
            "utf-16 be (no bom)" | "utf-16be-nobom" | "utf16be-nobom" => vec![Utf16Be],
            "gb18030" => vec![Gb18030],
            "gbk" | "gb2312" => vec![Gb18030, Whatwg(encoding_rs::GBK)],
            "lossy utf-8" => vec![LossyUtf8],
            _ => {
                let label = n.strip_prefix("whatwg:").unwrap_or(&n);
                match encoding_rs::Encoding::for_label(label.as_bytes()) {
                    Some(e) if e == encoding_rs::UTF_8 => vec![Utf8],
                    Some(e) if e == encoding_rs::GB18030 => vec![Gb18030],
                    Some(e) => vec![Whatwg(e)],
                    None => Vec::new(),
                }
            }
        }
    }

    /// The name stored in `Payload::Inline`: [`TextEncoding::of_name`] reads it back as this
    /// encoding and nothing else.
    pub(crate) fn name(self) -> String {
        match self {
            TextEncoding::Utf8 => "utf-8".into(),
            TextEncoding::Utf8Bom => "utf-8 bom".into(),
            TextEncoding::Utf16LeBom => "utf-16 le".into(),
            TextEncoding::Utf16BeBom => "utf-16 be".into(),
            TextEncoding::Gb18030 => "gb18030".into(),
            TextEncoding::LossyUtf8 => "lossy utf-8".into(),
            TextEncoding::Utf16Le => "utf-16 le (no bom)".into(),
            TextEncoding::Utf16Be => "utf-16 be (no bom)".into(),
            TextEncoding::Whatwg(e) => format!("whatwg:{}", e.name()),
        }
    }

    /// The bytes of `text` in this encoding; `None` when they cannot be exact.
    pub(crate) fn encode(self, text: &str) -> Option<Vec<u8>> {
        let utf16 = |bom: &[u8], unit: fn(u16) -> [u8; 2]| {
            let mut out = Vec::with_capacity(bom.len() + 2 * text.len());
            out.extend_from_slice(bom);
            text.encode_utf16().for_each(|u| out.extend_from_slice(&unit(u)));
            out
        };
        match self {
            TextEncoding::Utf8 => Some(text.as_bytes().to_vec()),
            TextEncoding::Utf8Bom => Some([&[0xEF, 0xBB, 0xBF], text.as_bytes()].concat()),
            TextEncoding::Utf16LeBom => Some(utf16(&[0xFF, 0xFE], u16::to_le_bytes)),
            TextEncoding::Utf16BeBom => Some(utf16(&[0xFE, 0xFF], u16::to_be_bytes)),
            TextEncoding::Utf16Le => Some(utf16(&[], u16::to_le_bytes)),
            TextEncoding::Utf16Be => Some(utf16(&[], u16::to_be_bytes)),
            TextEncoding::LossyUtf8 => None,
            TextEncoding::Gb18030 => TextEncoding::Whatwg(encoding_rs::GB18030).encode(text),
            TextEncoding::Whatwg(enc) => {
                let (bytes, _, unmappable) = enc.encode(text);
                if unmappable || enc.output_encoding() != enc {
                    return None;
                }
                Some(bytes.into_owned())
            }
        }
    }
}

/// Re-encodes inline legacy text to the file's bytes. `encoding` is a name: the ones the reference
/// implementation uses (`gb18030`, `utf-8 bom`, `utf-16 le`, `utf-16le-nobom`, …; `utf-16le` is
/// read as it reads it, with a BOM), or a WHATWG label. `None` when the encoding is unknown, cannot
/// encode, or the text cannot be encoded exactly (lossy UTF-8, unmappable characters).
pub fn encode_inline(text: &str, encoding: Option<&str>) -> Option<Vec<u8>> {
    match encoding {
        None => Some(text.as_bytes().to_vec()),
        Some(label) => TextEncoding::of_name(label).first()?.encode(text),
    }
}

/// The encodings a stored `encoding` may mean, the likeliest first; `Err` with a label naming it
/// when this build does not know it.
pub(crate) fn encodings_of(raw: Option<&RawEncoding>) -> std::result::Result<Vec<TextEncoding>, String> {
    match raw {
        None => Ok(vec![TextEncoding::Utf8]),
        Some(RawEncoding::Kind(k)) => TextEncoding::of_kind(*k)
            .map(|e| vec![e])
            .ok_or_else(|| format!("encoding {k}")),
        Some(RawEncoding::Name(n)) => {
            let all = TextEncoding::of_name(n);
            if all.is_empty() {
                Err(n.clone())
            } else {
                Ok(all)
            }
        }
        Some(RawEncoding::Other(v)) => Err(format!("encoding {v}")),
    }
}

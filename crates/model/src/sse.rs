//! An incremental decoder for `text/event-stream` (the WHATWG server-sent events format), written to
//! be fed whatever byte chunks the network delivers.
//!
//! Bytes are buffered until a whole line has arrived, and only whole lines are decoded as UTF-8, so a
//! chunk boundary inside a multi-byte character (or inside a `\r\n` pair) changes nothing: pushing a
//! stream in any split gives the events of pushing it whole. That property is what the fuzz target
//! `sse_decoder` and the corpus test check.
//!
//! Handled: `\n`, `\r\n` and `\r` line ends; comment lines (`:` — servers send them as keep-alives);
//! `data:` lines joined with `\n`; `event:` and `id:`; a leading byte-order mark; invalid UTF-8
//! (replaced by U+FFFD, as the format says). `retry:` is ignored: reconnecting is the client's policy.
//! Trade-off at the end of a stream: an event whose lines all arrived but whose closing blank line did
//! not is still delivered by [`SseDecoder::finish`] (lenient with servers that close early), while a
//! final line without its line end is dropped, since it may be cut short.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` name, if the server gave one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
    /// The last `id:` seen on the stream, if any.
    pub id: Option<String>,
}

/// The decoder's state between chunks.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line being received (no line end yet).
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    /// No line completed yet (a byte-order mark may still have to be stripped).
    at_start: bool,
    /// Data lines of the pending event (each followed by `\n`), or `None` when it has none.
    data: Option<String>,
    /// `event:` of the pending event.
    event: Option<String>,
    /// The last event id.
    last_id: Option<String>,
    /// How many comment lines were seen (keep-alives), for diagnostics.
    comments: u64,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> SseDecoder {
        SseDecoder {
            at_start: true,
            ..SseDecoder::default()
        }
    }

    /// Bytes held for the line and the event still being received: the caller bounds it, since a
    /// server could send one line without end.
    pub fn pending_bytes(&self) -> usize {
        self.line.len() + self.data.as_ref().map_or(0, String::len)
    }

    /// Feeds the next chunk; returns the events it completed, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = bytes;
        if self.after_cr {
            self.after_cr = false;
            if let Some(tail) = rest.strip_prefix(b"\n") {
                rest = tail;
            }
        }
        while let Some(pos) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let is_cr = rest[pos] == b'\r';
            rest = &rest[pos + 1..];
            if is_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
            let line = std::mem::take(&mut self.line);
            if let Some(event) = self.take_line(&line) {
                out.push(event);
            }
        }
        self.line.extend_from_slice(rest);
        out
    }

    /// Ends the stream: delivers a pending event whose lines all arrived (see the module docs) and
    /// drops an unterminated last line. The decoder is then back at the start of a stream.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let event = self.dispatch();
        let comments = self.comments;
        *self = SseDecoder::new();
        self.comments = comments;
        event.into_iter().collect()
    }

    /// How many comment (keep-alive) lines were seen so far.
    pub fn comments_seen(&self) -> u64 {
        self.comments
    }

    /// Whether bytes of an unfinished line or event are buffered.
    pub fn has_pending(&self) -> bool {
        !self.line.is_empty() || self.data.is_some()
    }

    fn take_line(&mut self, raw: &[u8]) -> Option<SseEvent> {
        let mut raw = raw;
        if self.at_start {
            self.at_start = false;
            raw = raw.strip_prefix(BOM).unwrap_or(raw);
        }
        if raw.is_empty() {
            return self.dispatch();
        }
        if raw[0] == b':' {
            self.comments += 1;
            return None;
        }
        let line = String::from_utf8_lossy(raw);
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "data" => {
                let data = self.data.get_or_insert_with(String::new);
                data.push_str(value);
                data.push('\n');
            }
            "event" => self.event = Some(value.to_string()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let event = self.event.take();
        let mut data = self.data.take()?;
        data.pop();
        Some(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
        })
    }
}

/// Decodes a whole stream at once (the reference the split-invariance checks compare against).
pub fn decode_all(bytes: &[u8]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = decoder.push(bytes);
    events.extend(decoder.finish());
    events
}

/// Decodes a stream pushed in the given pieces.
pub fn decode_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.push(chunk));
    }
    events.extend(decoder.finish());
    events
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;

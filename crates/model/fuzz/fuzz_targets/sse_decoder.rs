//! Fuzz target: the SSE decoder must give the same events however the stream is cut, and neither it
//! nor the stream assembler may panic on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retrace_model::sse::{decode_all, decode_chunks};
use retrace_model::StreamAssembler;

fuzz_target!(|stream: &[u8]| {
    let whole = decode_all(stream);
    let n = stream.len();
    assert_eq!(
        decode_chunks([&stream[..n / 3], &stream[n / 3..2 * n / 3], &stream[2 * n / 3..]]),
        whole
    );
    let size = 1 + usize::from(stream.first().copied().unwrap_or(0) % 16);
    assert_eq!(decode_chunks(stream.chunks(size)), whole);
    assert_eq!(decode_chunks(stream.chunks(1)), whole);
    let mut assembler = StreamAssembler::new();
    for event in &whole {
        if assembler.push_data(&event.data).is_err() {
            break;
        }
    }
    let _ = assembler.into_response();
});

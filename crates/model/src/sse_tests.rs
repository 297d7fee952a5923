use super::*;

fn data(events: &[SseEvent]) -> Vec<&str> {
    events.iter().map(|e| e.data.as_str()).collect()
}

#[test]
fn events_are_separated_by_blank_lines() {
    let events = decode_all(b"data: a\n\ndata: b\n\n");
    assert_eq!(data(&events), ["a", "b"]);
}

#[test]
fn all_three_line_ends_are_understood() {
    let events = decode_all(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n");
    assert_eq!(data(&events), ["a", "b", "c"]);
}

#[test]
fn multi_line_data_is_joined_with_newlines() {
    let events = decode_all(b"data: one\ndata:two\ndata\n\n");
    assert_eq!(data(&events), ["one\ntwo\n"]);
}

#[test]
fn comments_are_skipped_and_counted() {
    let mut d = SseDecoder::new();
    let events = d.push(b": keep-alive\n\n:\ndata: x\n: mid-event comment\n\n");
    assert_eq!(data(&events), ["x"]);
    assert_eq!(d.comments_seen(), 3);
}

#[test]
fn blank_lines_without_data_dispatch_nothing() {
    assert!(decode_all(b"\n\n\r\n\nevent: ping\n\n").is_empty());
}

#[test]
fn event_names_and_ids_are_kept() {
    let events = decode_all(b"event: error\nid: 7\ndata: {}\n\ndata: next\n\n");
    assert_eq!(events[0].event.as_deref(), Some("error"));
    assert_eq!(events[0].id.as_deref(), Some("7"));
    assert_eq!(events[1].event, None);
    assert_eq!(events[1].id.as_deref(), Some("7"), "the last id carries over");
}

#[test]
fn only_one_space_after_the_colon_is_stripped() {
    let events = decode_all(b"data:  two spaces\n\n");
    assert_eq!(data(&events), [" two spaces"]);
}

#[test]
fn a_leading_bom_is_stripped_even_when_split() {
    let stream = b"\xEF\xBB\xBFdata: x\n\n";
    assert_eq!(data(&decode_all(stream)), ["x"]);
    let events = decode_chunks([&stream[..1], &stream[1..2], &stream[2..]]);
    assert_eq!(data(&events), ["x"]);
}

#[test]
fn a_multibyte_character_split_across_chunks_is_whole() {
    let stream = "data: h\u{e9}llo \u{4e16}\u{754c} \u{1f389}\n\n".as_bytes();
    for cut in 0..=stream.len() {
        let events = decode_chunks([&stream[..cut], &stream[cut..]]);
        assert_eq!(
            data(&events),
            ["h\u{e9}llo \u{4e16}\u{754c} \u{1f389}"],
            "cut at {cut}"
        );
    }
}

#[test]
fn a_crlf_split_between_chunks_is_one_line_end() {
    let events = decode_chunks([b"data: a\r".as_slice(), b"\n\r", b"\ndata: b\r\n\r\n"]);
    assert_eq!(data(&events), ["a", "b"]);
}

#[test]
fn invalid_utf8_is_replaced() {
    let events = decode_all(b"data: a\xFFb\n\n");
    assert_eq!(data(&events), ["a\u{fffd}b"]);
}

#[test]
fn finish_delivers_a_complete_event_missing_its_blank_line() {
    assert_eq!(data(&decode_all(b"data: a\n")), ["a"]);
}

#[test]
fn finish_drops_an_unterminated_last_line() {
    let mut d = SseDecoder::new();
    assert!(d.push(b"data: {\"cut").is_empty());
    assert!(d.has_pending());
    assert!(d.finish().is_empty());
    assert!(!d.has_pending());
}

#[test]
fn single_byte_chunks_equal_the_whole() {
    let stream = b": hi\r\ndata: {\"a\":1}\r\n\r\nevent: e\rdata: x\rdata: y\r\r\xEF\xBB\xBFdata: z\n\n";
    let whole = decode_all(stream);
    let pieces = decode_chunks(stream.chunks(1));
    assert_eq!(whole, pieces);
    // A byte-order mark is stripped only at the start of the stream: mid-stream it makes the field
    // name `\u{feff}data`, which is ignored.
    assert_eq!(data(&whole), ["{\"a\":1}", "x\ny"]);
}

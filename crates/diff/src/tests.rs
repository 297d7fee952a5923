use super::*;

#[test]
fn binary_or_large_sides_are_not_diffed() {
    assert_eq!(diff_sides(Side::Bytes(b"a\0b"), Side::Absent, 100), None);
    assert_eq!(diff_sides(Side::Bytes(&[0xff, 0xfe]), Side::Absent, 100), None);
    assert_eq!(diff_sides(Side::TooLarge, Side::Absent, 100), None);
    let d = diff_sides(Side::Absent, Side::Bytes(b"x\n"), 100).unwrap();
    assert_eq!(d.text, "@@ -0,0 +1 @@\n+x\n");
}

#[test]
fn only_a_line_feed_ends_a_line() {
    // A lone carriage return is part of its line, as `diff -u` and git read it.
    let d = unified("", "a\rb\r\n", 1000);
    assert_eq!(d.text, "@@ -0,0 +1 @@\n+a\rb\r\n");
    assert_eq!((d.added, d.removed), (1, 0));
    let d = unified("a\rb\rc\r", "a\rB\rc\r", 1000);
    assert_eq!(
        d.text,
        "@@ -1 +1 @@\n-a\rb\rc\r\n\\ No newline at end of file\n+a\rB\rc\r\n\\ No newline at end of file\n"
    );
    let d = unified("one\r\ntwo\r\n", "one\r\n2\r\n", 1000);
    assert_eq!(d.text, "@@ -1,2 +1,2 @@\n one\r\n-two\r\n+2\r\n");
}

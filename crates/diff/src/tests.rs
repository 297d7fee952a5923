use super::*;

#[test]
fn binary_or_large_sides_are_not_diffed() {
    assert_eq!(diff_sides(Side::Bytes(b"a\0b"), Side::Absent, 100), None);
    assert_eq!(diff_sides(Side::Bytes(&[0xff, 0xfe]), Side::Absent, 100), None);
    assert_eq!(diff_sides(Side::TooLarge, Side::Absent, 100), None);
    let d = diff_sides(Side::Absent, Side::Bytes(b"x\n"), 100).unwrap();
    assert_eq!(d.text, "@@ -0,0 +1 @@\n+x\n");
}

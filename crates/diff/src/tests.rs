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

/// Added and removed counted by Myers on the whole texts, nothing set aside.
fn plain_counts(old: &[&str], new: &[&str]) -> (u64, u64) {
    let ops = similar::capture_diff_slices(Algorithm::Myers, old, new);
    let (mut added, mut removed) = (0, 0);
    for op in ops {
        let (_, o, n) = op.as_tag_tuple();
        if op.tag() != DiffTag::Equal {
            removed += o.len() as u64;
            added += n.len() as u64;
        }
    }
    (added, removed)
}

#[test]
fn lines_on_one_side_only_are_set_aside_and_the_diff_stays_minimal_and_exact() {
    // A small generator: lines from a few shared words and some found on one side only.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..400 {
        let mut side = |tag: &str| -> String {
            let len = next(30);
            (0..len)
                .map(|i| match next(4) {
                    0 => format!("{tag} only {round} {i}\n"),
                    _ => format!("shared {}\n", next(6)),
                })
                .collect()
        };
        let (old, new) = (side("old"), side("new"));
        let d = unified(&old, &new, usize::MAX);
        let (o, n) = (lines_of(&old), lines_of(&new));
        assert_eq!((d.added, d.removed), plain_counts(&o, &n), "{old:?} → {new:?}");
        // The hunks turn the old text into the new one.
        let ops = ops_of(&o, &n);
        let mut rebuilt = String::new();
        for op in &ops {
            for c in op.iter_changes(&o[..], &n[..]) {
                if c.tag() != ChangeTag::Delete {
                    rebuilt.push_str(c.value());
                }
            }
        }
        assert_eq!(rebuilt, new);
    }
    // A rewrite sharing no line: every line removed and added, in one hunk.
    let d = unified("a\nb\n", "c\nd\ne\n", 1000);
    assert_eq!(d.text, "@@ -1,2 +1,3 @@\n-a\n-b\n+c\n+d\n+e\n");
    assert_eq!((d.added, d.removed), (3, 2));
}

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;

use proptest::prelude::*;
use retrace_fsutil::{FaultInjector, Fs};

use super::*;

fn headers(scan: &Scan) -> Vec<String> {
    scan.frames
        .iter()
        .map(|f| String::from_utf8(f.header.clone()).unwrap())
        .collect()
}

fn scan_path(path: &Path) -> Scan {
    let f = File::open(path).unwrap();
    let len = f.metadata().unwrap().len();
    scan(&f, len).unwrap()
}

/// A segment holding three frames: no body, a small body, a streamed body.
fn three(dir: &Path) -> Segment {
    let fs = Fs::without_sync();
    let mut seg = Segment::create(&fs, dir, 7).unwrap();
    let mut a = seg.append().unwrap();
    a.frame(br#"{"k":"turn","turn":7}"#, b"");
    a.frame(br#"{"k":"entry","index":0}"#, b"before\nbytes");
    let big = vec![b'x'; 200_000];
    let (_, copied) = a
        .stream(
            &fs,
            br#"{"k":"entry","index":1}"#,
            &mut big.as_slice(),
            big.len() as u64,
            true,
        )
        .unwrap();
    assert_eq!(copied.len, 200_000);
    a.commit(&fs).unwrap();
    seg
}

#[test]
fn frames_read_back_with_their_bodies() {
    let tmp = tempfile::tempdir().unwrap();
    let seg = three(tmp.path());
    assert_eq!(seg.path, tmp.path().join("log/7.seg"));
    assert_eq!(
        fs::metadata(&seg.path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let s = scan_path(&seg.path);
    assert_eq!(s.tail, Tail::Clean);
    assert_eq!(s.good_len, seg.len);
    assert_eq!(
        headers(&s),
        [
            r#"{"k":"turn","turn":7}"#,
            r#"{"k":"entry","index":0}"#,
            r#"{"k":"entry","index":1}"#
        ]
    );
    assert_eq!(s.frames[0].body.length, 0);
    assert_eq!(read_slice(&seg.path, s.frames[1].body).unwrap(), b"before\nbytes");
    assert_eq!(
        read_slice(&seg.path, s.frames[2].body).unwrap(),
        vec![b'x'; 200_000]
    );
    // The prefix line is plain text.
    let bytes = fs::read(&seg.path).unwrap();
    assert!(bytes.starts_with(b"@21 0 "), "{:?}", &bytes[..30]);
    assert_eq!(parse_segment_name("7.seg"), Some(7));
    assert_eq!(parse_segment_name("x.seg"), None);
    assert_eq!(parse_segment_name("7.seg.tmp"), None);
}

#[test]
fn every_cut_of_the_last_frame_is_a_torn_tail_the_writer_cuts_off() {
    let tmp = tempfile::tempdir().unwrap();
    let seg = three(tmp.path());
    let whole = fs::read(&seg.path).unwrap();
    let s = scan_path(&seg.path);
    let last_at = s.frames[2].at;
    let fs_ = Fs::without_sync();
    for cut in (last_at + 1..whole.len() as u64)
        .step_by(997)
        .chain([last_at + 1, last_at + 5])
    {
        fs::write(&seg.path, &whole[..cut as usize]).unwrap();
        let s = scan_path(&seg.path);
        assert_eq!(s.frames.len(), 2, "cut at {cut}");
        assert_eq!(s.good_len, last_at);
        assert!(
            matches!(s.tail, Tail::Torn { at, .. } if at == last_at),
            "{:?}",
            s.tail
        );
        let mut re = Segment::reopen(&fs_, &seg.path, 7, &s).unwrap().unwrap();
        assert_eq!(fs::metadata(&seg.path).unwrap().len(), last_at);
        let mut a = re.append().unwrap();
        a.frame(br#"{"k":"ended","turn":7}"#, b"");
        a.commit(&fs_).unwrap();
        let s = scan_path(&seg.path);
        assert_eq!(s.tail, Tail::Clean);
        assert_eq!(headers(&s).last().unwrap(), r#"{"k":"ended","turn":7}"#);
    }
}

#[test]
fn a_tail_a_power_cut_left_zeroed_or_stale_is_torn_not_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let seg = three(tmp.path());
    let s = scan_path(&seg.path);
    let last_at = s.frames[2].at;
    let len = seg.len;
    let f = OpenOptions::new().write(true).open(&seg.path).unwrap();
    // The last frame's bytes zeroed (its length reached the disk, its data did not).
    f.write_all_at(&vec![0u8; (len - last_at) as usize], last_at)
        .unwrap();
    let s = scan_path(&seg.path);
    assert_eq!(s.frames.len(), 2);
    assert!(matches!(s.tail, Tail::Torn { .. }), "{:?}", s.tail);
    // Stale bytes that hold no frame.
    f.write_all_at(&vec![b'@'; (len - last_at) as usize], last_at)
        .unwrap();
    assert!(matches!(scan_path(&seg.path).tail, Tail::Torn { .. }));
    // Zeros past the last whole frame.
    let seg2 = three(&tmp.path().join("b"));
    let mut f2 = OpenOptions::new().append(true).open(&seg2.path).unwrap();
    f2.write_all(&[0u8; 4096]).unwrap();
    let s = scan_path(&seg2.path);
    assert_eq!(s.frames.len(), 3);
    assert!(matches!(s.tail, Tail::Torn { at, .. } if at == seg2.len));
}

#[test]
fn damage_before_whole_frames_stops_the_scan_and_the_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let seg = three(tmp.path());
    let s = scan_path(&seg.path);
    let f = OpenOptions::new().read(true).write(true).open(&seg.path).unwrap();
    // A byte of the second frame's header changed.
    let at = s.frames[1].at + 12;
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    f.write_all_at(&[b[0] ^ 0x20], at).unwrap();
    let d = scan_path(&seg.path);
    assert_eq!(headers(&d), [r#"{"k":"turn","turn":7}"#]);
    assert!(
        matches!(&d.tail, Tail::Damaged { at, why } if *at == s.frames[1].at && why.contains("CRC")),
        "{:?}",
        d.tail
    );
    assert!(Segment::reopen(&Fs::without_sync(), &seg.path, 7, &d)
        .unwrap()
        .is_none());
    f.write_all_at(&b, at).unwrap();
    // A body's byte is not the scan's business (its SHA-256 is checked when it is read).
    f.write_all_at(b"X", s.frames[1].body.offset).unwrap();
    assert_eq!(scan_path(&seg.path).frames.len(), 3);
    // A prefix that is not one.
    f.write_all_at(b"#", s.frames[1].at).unwrap();
    assert!(matches!(scan_path(&seg.path).tail, Tail::Damaged { .. }));
}

#[test]
fn a_streamed_body_that_changes_while_read_keeps_nothing_of_its_append() {
    let tmp = tempfile::tempdir().unwrap();
    let fs_ = Fs::without_sync();
    let mut seg = three(tmp.path());
    let before = seg.len;
    let mut a = seg.append().unwrap();
    a.frame(br#"{"k":"gap"}"#, b"");
    let short = vec![b'y'; 10];
    let err = a
        .stream(
            &fs_,
            br#"{"k":"entry","index":2}"#,
            &mut short.as_slice(),
            11,
            true,
        )
        .unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidData);
    drop(a);
    let mut a = seg.append().unwrap();
    let long = vec![b'y'; 12];
    assert!(a
        .stream(
            &fs_,
            br#"{"k":"entry","index":2}"#,
            &mut long.as_slice(),
            11,
            true
        )
        .is_err());
    drop(a);
    assert_eq!(seg.len, before);
    assert_eq!(fs::metadata(&seg.path).unwrap().len(), before);
    assert_eq!(scan_path(&seg.path).tail, Tail::Clean);
}

#[test]
fn a_crash_at_any_step_of_an_append_leaves_the_frames_before_it_or_all_of_them() {
    let tmp = tempfile::tempdir().unwrap();
    for k in 1..=8u64 {
        let dir = tmp.path().join(k.to_string());
        fs::create_dir_all(&dir).unwrap();
        let faults = FaultInjector::crash_at(k);
        let fs_ = Fs::durable().with_faults(faults.clone());
        let run = || -> io::Result<()> {
            let mut seg = Segment::create(&fs_, &dir, 0)?;
            let mut a = seg.append().unwrap();
            a.frame(br#"{"k":"turn","turn":0}"#, b"");
            a.commit(&fs_)?;
            let mut a = seg.append().unwrap();
            a.frame(br#"{"k":"entry","index":0}"#, b"abc");
            let mut src: &[u8] = b"defg";
            a.stream(&fs_, br#"{"k":"entry","index":1}"#, &mut src, 4, true)?;
            a.commit(&fs_)
        };
        let result = run();
        let path = dir.join("log/0.seg");
        if !path.exists() {
            assert!(result.is_err());
            continue;
        }
        let s = scan_path(&path);
        let n = s.frames.len();
        assert!(
            n == 0 || n == 1 || (n == 3 && result.is_ok()),
            "k={k}: {n} frames, {result:?}"
        );
        assert!(!matches!(s.tail, Tail::Damaged { .. }), "k={k}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever happens to the bytes of a segment, a scan never panics and what it returns is a
    /// prefix of what was written.
    #[test]
    fn a_scan_returns_a_prefix_of_the_frames_written(
        frames in proptest::collection::vec(
            ("[a-z]{0,40}", proptest::collection::vec(any::<u8>(), 0..300)),
            1..8,
        ),
        cut in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..=255), 0..3),
    ) {
        let tmp = tempfile::tempdir().unwrap();
        let fs_ = Fs::without_sync();
        let mut seg = Segment::create(&fs_, tmp.path(), 1).unwrap();
        let mut a = seg.append().unwrap();
        let written: Vec<String> = frames
            .iter()
            .map(|(h, body)| {
                let header = format!(r#"{{"h":"{h}"}}"#);
                a.frame(header.as_bytes(), body);
                header
            })
            .collect();
        a.commit(&fs_).unwrap();
        let mut bytes = fs::read(&seg.path).unwrap();
        bytes.truncate(cut.index(bytes.len() + 1));
        for (i, x) in &flips {
            if !bytes.is_empty() {
                let i = i.index(bytes.len());
                bytes[i] ^= x;
            }
        }
        fs::write(&seg.path, &bytes).unwrap();
        let s = scan_path(&seg.path);
        let got = headers(&s);
        prop_assert!(got.len() <= written.len());
        prop_assert_eq!(&got[..], &written[..got.len()]);
        if flips.is_empty() {
            let damaged = matches!(s.tail, Tail::Damaged { .. });
            prop_assert!(!damaged, "a cut alone is never damage: {:?}", s.tail);
        }
    }
}

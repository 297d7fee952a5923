//! Loading a sidecar of any format (SPEC §3.3): which record wins for each turn, which directories
//! are tombstones, and what the next turn number is.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use retrace_protocol::{FsckProblem, Gap, GapReason, Severity};

use crate::error::{IoContext, Result};
use crate::from_record::{parse_time, turn_from_raw};
use crate::layout::{
    expired_rel, journal_rel, marker_name, meta_rel, parse_number, parse_turn_file_name, turn_rel,
    EXPIRED_DIR, TURNS_DIR,
};
use crate::model::{Source, Turn};
use crate::record::{read_record, RawRecord};

/// What loading a sidecar found.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The live turns, each from its winning record.
    pub turns: BTreeMap<u64, Turn>,
    /// The largest turn number found anywhere (records, markers, tombstones, `expired/`).
    pub max_turn: Option<u64>,
    /// `turns/N` directories without a `turn-N.json`: dead, never resurrected.
    pub tombstones: BTreeSet<u64>,
    /// Everything odd, from superseded records (info) to unreadable ones (error).
    pub problems: Vec<FsckProblem>,
    /// The log's segments, by name.
    pub(crate) log_segments: BTreeMap<u64, crate::logread::SegInfo>,
    /// The log's turns that did not end (a crash, or a store dropped mid-turn), each with its
    /// lines as a journal: recovery settles their intents.
    pub(crate) log_unended: BTreeMap<u64, Vec<u8>>,
    /// The after-images the log's turns recorded with their sequence (not intents): Retrace's
    /// writes that `state.json` may not hold, oldest first.
    pub(crate) log_owned: Vec<(retrace_fsutil::RelPath, crate::model::Image, u64)>,
    /// Below which turn a code restore is not offered, and why: turns in a log segment that
    /// cannot be read whole are not known.
    pub(crate) log_unknown: Vec<(u64, String)>,
    /// The largest turn the log says retention deleted.
    pub(crate) log_pruned: Option<u64>,
}

struct Candidate {
    source: Source,
    rel: String,
    raw: RawRecord,
    /// What was wrong in the turn's journal (the lines before it were applied).
    journal_note: Option<String>,
}

/// One turn's files as found on disk, before arbitration.
#[derive(Default)]
struct Found {
    top: Option<std::result::Result<Candidate, String>>,
    expired: Option<std::result::Result<Candidate, String>>,
    v3: Option<std::result::Result<Candidate, String>>,
    v3_dir: bool,
}

fn problem(
    path: &str,
    text: String,
    severity: Severity,
    turn: Option<u64>,
    file: Option<String>,
) -> FsckProblem {
    FsckProblem {
        path: path.to_string(),
        problem: text,
        severity,
        turn,
        file,
    }
}

fn read_candidate(
    dir: &Path,
    rel: String,
    source: Source,
    number: u64,
) -> std::result::Result<Candidate, String> {
    let mut raw = read_record(&dir.join(&rel)).map_err(|e| e.to_string())?;
    let mut journal_note = None;
    if source == Source::V3 {
        // What the turn captured since its record was last written whole. A journal that exists
        // but cannot be read makes the record unreadable: without it the turn would look as if it
        // touched fewer files than it did, and a restore would leave the others as they are.
        let journal = dir.join(journal_rel(number));
        match crate::record::read_bounded_as(&journal, crate::record::MAX_JOURNAL_BYTES) {
            Ok(bytes) => match crate::record::apply_journal(&mut raw, &bytes) {
                None => {}
                Some(stop) if stop.lines_after == 0 => journal_note = Some(stop.problem),
                Some(stop) => {
                    return Err(format!(
                        "its journal `{}` is damaged: {} ({} later lines cannot be applied, so the turn's files are not all known)",
                        journal_rel(number),
                        stop.problem,
                        stop.lines_after
                    ))
                }
            },
            Err(e) if e.is_not_found() => {}
            Err(e) => {
                return Err(format!(
                    "its journal `{}` cannot be read: {e}",
                    journal_rel(number)
                ))
            }
        }
    }
    if raw.turn != number {
        return Err(format!(
            "`{rel}` says turn {} but its name says turn {number}",
            raw.turn
        ));
    }
    Ok(Candidate {
        source,
        rel,
        raw,
        journal_note,
    })
}

/// Loads every record of the sidecar at `dir`. `root` is the workspace root when known (to make old
/// absolute paths relative). A missing directory is an empty sidecar.
pub fn load_sidecar(dir: &Path, root: Option<&Path>) -> Result<Loaded> {
    let mut out = Loaded::default();
    if !dir.exists() {
        return Ok(out);
    }
    let mut found: BTreeMap<u64, Found> = BTreeMap::new();
    for entry in fs::read_dir(dir).at("list", dir)? {
        let entry = entry.at("list", dir)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(n) = parse_turn_file_name(&name) {
            let c = read_candidate(dir, name, Source::Top, n);
            found.entry(n).or_default().top = Some(c);
        }
    }
    let expired = dir.join(EXPIRED_DIR);
    if expired.is_dir() {
        for entry in fs::read_dir(&expired).at("list", &expired)? {
            let entry = entry.at("list", &expired)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(n) = parse_turn_file_name(&name) {
                let c = read_candidate(dir, format!("{EXPIRED_DIR}/{name}"), Source::Expired, n);
                found.entry(n).or_default().expired = Some(c);
            }
        }
    }
    let turns_dir = dir.join(TURNS_DIR);
    if turns_dir.is_dir() {
        for entry in fs::read_dir(&turns_dir).at("list", &turns_dir)? {
            let entry = entry.at("list", &turns_dir)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(n) = parse_number(&name) else { continue };
            let f = found.entry(n).or_default();
            f.v3_dir = true;
            // Named as listed: `turns/007` is turn 7's directory too.
            let rel = format!("{TURNS_DIR}/{name}/meta.json");
            if dir.join(&rel).exists() {
                f.v3 = Some(read_candidate(dir, rel, Source::V3, n));
            } else {
                // A turn interrupted before its first record: the marker alone describes it.
                out.problems.push(problem(
                    &format!("{TURNS_DIR}/{name}"),
                    "no meta.json (a turn interrupted before its first record)".into(),
                    Severity::Info,
                    Some(n),
                    None,
                ));
            }
        }
    }
    out.max_turn = found.keys().next_back().copied();
    for (n, f) in found {
        arbitrate(n, f, root, &mut out);
    }
    load_log(dir, root, &mut out)?;
    Ok(out)
}

/// The turns of the log (`log/`), over whatever the directories above hold for the same numbers.
fn load_log(dir: &Path, root: Option<&Path>, out: &mut Loaded) -> Result<()> {
    let log = crate::logread::read_log(dir)?;
    for (path, text, error) in log.problems {
        let severity = if error { Severity::Error } else { Severity::Warning };
        out.problems.push(problem(&path, text, severity, None, None));
    }
    for (n, lt) in log.turns {
        out.max_turn = Some(out.max_turn.map_or(n, |m| m.max(n)));
        let rel = crate::seglog::segment_rel(lt.segment);
        if lt.deleted {
            // Not listed; its writes stay Retrace's own (retention never drops a proof).
            if let Some(mut raw) = lt.record.clone() {
                let _ = crate::record::apply_journal(&mut raw, &lt.journal);
                let (t, _) = turn_from_raw(&raw, Source::Log, &rel, root);
                out.log_owned.extend(owned_in(&t, &lt));
            }
            continue;
        }
        let Some(mut raw) = lt.record.clone() else {
            out.problems.push(problem(
                crate::seglog::LOG_DIR,
                format!("the log holds frames of turn {n} but not its start; they are ignored"),
                Severity::Warning,
                Some(n),
                None,
            ));
            continue;
        };
        if out.turns.contains_key(&n) {
            out.problems.push(problem(
                &rel,
                format!("turn {n} is recorded both in the log and in a record file; the log's is used"),
                Severity::Error,
                Some(n),
                None,
            ));
        }
        if raw.turn != n {
            let why = format!(
                "its start in `{rel}` says turn {} but its frames say turn {n}",
                raw.turn
            );
            out.problems
                .push(problem(&rel, why, Severity::Error, Some(n), None));
            out.turns.insert(n, unreadable_turn(n, None, &rel));
            continue;
        }
        let mut note = None;
        let stop = crate::record::apply_journal(&mut raw, &lt.journal);
        let broken = match (&lt.damaged, stop) {
            (Some(why), _) => Some(why.clone()),
            (None, Some(stop)) if stop.lines_after > 0 => Some(format!(
                "its frames in `{rel}` do not apply: {} ({} later lines cannot be applied, so the turn's files are not all known)",
                stop.problem, stop.lines_after
            )),
            (None, Some(stop)) => {
                note = Some(stop.problem);
                None
            }
            (None, None) => None,
        };
        if let Some(why) = broken {
            out.problems
                .push(problem(&rel, why, Severity::Error, Some(n), None));
            out.turns.insert(n, unreadable_turn(n, Some(&raw), &rel));
            continue;
        }
        for (i, end) in &lt.ends {
            if let Some(f) = raw.files.get_mut(*i) {
                f.end = Some(end.clone());
            }
        }
        for i in &lt.unowned {
            if let Some(f) = raw.files.get_mut(*i) {
                f.after_existed = None;
                f.after_sha256 = None;
                f.after_mode = None;
            }
        }
        if !lt.ended {
            out.log_unended.insert(n, lt.journal.clone());
        }
        let c = Candidate {
            source: Source::Log,
            rel,
            raw,
            journal_note: note,
        };
        admit(n, &c, root, out, Some(&lt.bodies));
        if let Some(t) = out.turns.get(&n).filter(|t| t.source == Source::Log) {
            let owned = owned_in(t, &lt);
            out.log_owned.extend(owned);
        }
    }
    out.log_owned.sort_by_key(|(_, _, seq)| *seq);
    // A segment a later one took over from ends with `sealed`: one that does not lost its end.
    let newest = log.segments.keys().next_back().copied();
    let mut unknown = log.unknown.clone();
    for (name, info) in &log.segments {
        if Some(*name) != newest && !info.sealed && !matches!(info.tail, crate::seglog::Tail::Damaged { .. })
        {
            let rel = crate::seglog::segment_rel(*name);
            out.problems.push(problem(
                &rel,
                "the log segment ends before it was sealed though a later one exists: its end was cut off"
                    .into(),
                Severity::Error,
                None,
                None,
            ));
            unknown.push((*name, format!("the log segment `{rel}` lost its end")));
        }
    }
    if let Some(why) = &log.not_a_dir {
        out.log_unknown
            .push((u64::MAX, format!("the sidecar's log cannot be read ({why})")));
    }
    for (seg, why) in &unknown {
        // Up to the next segment there is (readable or not): what the segment held is before it.
        let next = std::fs::read_dir(dir.join(crate::seglog::LOG_DIR))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(crate::seglog::parse_segment_name))
            .filter(|n| n > seg)
            .min()
            .unwrap_or(u64::MAX);
        out.log_unknown.push((
            next,
            format!("{why}: what the turns recorded there did is not known"),
        ));
        // Numbers it may hold are never handed out again: up to the next segment's, or as many
        // as a segment takes.
        let upto = match next {
            u64::MAX => seg.saturating_add(crate::logread::SEGMENT_TURNS as u64 - 1),
            n => n - 1,
        };
        out.max_turn = Some(out.max_turn.map_or(upto, |m| m.max(upto)));
    }
    out.log_segments = log.segments;
    out.log_pruned = log.max_deleted;
    Ok(())
}

fn rank(c: &Candidate) -> u8 {
    match c.source {
        Source::Top if !c.raw.is_marker() => 4,
        Source::V3 => 3,
        Source::Top => 2,
        Source::Expired => 1,
        Source::MarkerOnly | Source::Log => 0,
    }
}

fn arbitrate(n: u64, f: Found, root: Option<&Path>, out: &mut Loaded) {
    let top_exists = f.top.is_some();
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut v3_unreadable: Option<(String, String)> = None;
    for (slot, rel_of, is_v3) in [
        (f.top, marker_name(n), false),
        (f.expired, expired_rel(n), false),
        (f.v3, meta_rel(n), true),
    ] {
        match slot {
            None => {}
            Some(Ok(c)) => {
                if c.source == Source::V3 && !top_exists {
                    continue;
                }
                candidates.push(c)
            }
            Some(Err(e)) => {
                if is_v3 && !top_exists {
                    continue;
                }
                out.problems
                    .push(problem(&rel_of, e.clone(), Severity::Error, Some(n), None));
                if is_v3 {
                    v3_unreadable = Some((rel_of, e));
                }
            }
        }
    }
    if f.v3_dir && !top_exists {
        out.tombstones.insert(n);
        out.problems.push(problem(
            &turn_rel(n),
            format!("tombstone: turn {n} has no turn-{n}.json marker, so its directory is ignored"),
            Severity::Info,
            Some(n),
            None,
        ));
    }
    // A marker keeps a v3 turn alive; it never competes with the v3 record itself.
    let has_v3 = candidates.iter().any(|c| c.source == Source::V3);
    let winner_idx = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| !(has_v3 && c.source == Source::Top && c.raw.is_marker()))
        .max_by(|(_, a), (_, b)| {
            let ta = parse_time(&a.raw.time);
            let tb = parse_time(&b.raw.time);
            ta.cmp(&tb).then(rank(a).cmp(&rank(b)))
        })
        .map(|(i, _)| i);
    let Some(wi) = winner_idx else {
        if top_exists {
            // Nothing readable but the turn's marker file exists: list it as unreadable.
            let rel = v3_unreadable.map(|(r, _)| r).unwrap_or_else(|| marker_name(n));
            out.turns.insert(n, unreadable_turn(n, None, &rel));
        }
        return;
    };
    for (i, c) in candidates.iter().enumerate() {
        if i != wi && !(c.source == Source::Top && c.raw.is_marker() && has_v3) {
            out.problems.push(problem(
                &c.rel,
                format!("superseded by {}", candidates[wi].rel),
                Severity::Info,
                Some(n),
                None,
            ));
        }
    }
    let w = &candidates[wi];
    if w.source == Source::Top && w.raw.is_marker() {
        if let Some((rel, _)) = v3_unreadable {
            out.turns.insert(n, unreadable_turn(n, Some(&w.raw), &rel));
            return;
        }
    }
    admit(n, w, root, out, None);
}

/// A turn listed from its marker because its record cannot be read: coverage `none`, an
/// `unreadable` gap naming the record, no files, no restore.
fn unreadable_turn(n: u64, marker: Option<&RawRecord>, record: &str) -> Turn {
    let (mut turn, _) = match marker {
        Some(m) => turn_from_raw(m, Source::MarkerOnly, record, None),
        None => turn_from_raw(
            &RawRecord {
                turn: n,
                schema_version: Some(2),
                ..RawRecord::default()
            },
            Source::MarkerOnly,
            record,
            None,
        ),
    };
    turn.source = Source::MarkerOnly;
    turn.record_path = record.to_string();
    turn.files.clear();
    turn.gaps.retain(|g| g.reason != GapReason::ExpiredPayload);
    turn.expired = false;
    turn.add_gap(Gap {
        reason: GapReason::Unreadable,
        tool: None,
        path: None,
        detail: Some(format!("the record {record} cannot be read")),
    });
    turn
}

/// Lists a turn from its winning record: what is odd about it said, its entries made a turn.
fn admit(
    n: u64,
    w: &Candidate,
    root: Option<&Path>,
    out: &mut Loaded,
    bodies: Option<&BTreeMap<usize, crate::model::Slice>>,
) {
    if let Some(note) = &w.journal_note {
        let at = if w.source == Source::Log {
            w.rel.clone()
        } else {
            journal_rel(n)
        };
        out.problems
            .push(problem(&at, note.clone(), Severity::Warning, Some(n), None));
    }
    let (mut turn, findings) = turn_from_raw(&w.raw, w.source, &w.rel, root);
    if let Some(bodies) = bodies {
        // A log turn's before-images are its entry frames' bodies.
        for (i, f) in turn.files.iter_mut().enumerate() {
            if let crate::model::Before::Present { payload, .. } = &mut f.before {
                if matches!(payload, crate::model::Payload::File(_)) {
                    *payload = match bodies.get(&i) {
                        Some(s) => crate::model::Payload::Log(*s),
                        None => crate::model::Payload::Corrupt(
                            "the log holds no bytes for its before-image".into(),
                        ),
                    };
                }
            }
        }
    }
    for (file, text) in findings {
        out.problems
            .push(problem(&w.rel, text, Severity::Warning, Some(n), Some(file)));
    }
    for f in &turn.files {
        if let crate::model::Before::Present {
            payload: crate::model::Payload::Corrupt(why),
            ..
        } = &f.before
        {
            out.problems.push(problem(
                &w.rel,
                format!("the entry is corrupt: {why}; a restore that needs it fails"),
                Severity::Error,
                Some(n),
                Some(f.path.display()),
            ));
        }
    }
    if parse_time(&w.raw.time).is_none() {
        out.problems.push(problem(
            &w.rel,
            format!("time `{}` is not RFC 3339", w.raw.time),
            Severity::Warning,
            Some(n),
            None,
        ));
    }
    out.turns.insert(n, turn);
}

/// The ownership proofs log turn `t` records: for each entry, its last after-image line with a
/// sequence (an intent or an `unowned` frame after it cancels it).
fn owned_in(
    t: &crate::model::Turn,
    lt: &crate::logread::LogTurn,
) -> Vec<(retrace_fsutil::RelPath, crate::model::Image, u64)> {
    let mut last: BTreeMap<usize, (crate::model::Image, u64)> = BTreeMap::new();
    for line in lt.journal.split(|b| *b == b'\n') {
        let Ok(l) = serde_json::from_slice::<crate::record::JournalLine>(line) else {
            continue;
        };
        if let (Some(i), Some(a)) = (l.index, l.after) {
            match a.seq.filter(|_| !a.intended) {
                Some(seq) => {
                    let image = crate::model::Image {
                        existed: a.existed,
                        sha256: a.sha256.filter(|_| a.existed),
                        mode: a.mode.filter(|_| a.existed),
                    };
                    last.insert(i, (image, seq));
                }
                None => {
                    last.remove(&i);
                }
            }
        }
    }
    for i in &lt.unowned {
        last.remove(i);
    }
    last.into_iter()
        .filter_map(|(i, (image, seq))| {
            let rel = t.files.get(i)?.path.safe()?.clone();
            Some((rel, image, seq))
        })
        .collect()
}

//! Text with folded pastes: a pasted block of many lines stands in the text as one marker
//! character (a Unicode noncharacter, which typed or pasted text never holds: such characters are
//! replaced on the way in), shown as "[pasted 120 lines]" and sent whole.

use std::borrow::Cow;

/// The markers: the noncharacters U+FDD0..=U+FDEF, "for a program's internal use". An input holds
/// at most this many folds; a paste beyond them goes in unfolded.
const MARKERS: std::ops::RangeInclusive<char> = '\u{fdd0}'..='\u{fdef}';

/// A paste of more than this many lines is folded.
pub const FOLD_LINES: usize = 5;

/// Whether `c` is one of the markers.
pub(crate) fn is_marker(c: char) -> bool {
    MARKERS.contains(&c)
}

/// `text` with every marker character replaced (typed or pasted text never makes a fold).
pub(crate) fn sanitize(text: &str) -> Cow<'_, str> {
    if text.chars().any(is_marker) {
        Cow::Owned(
            text.chars()
                .map(|c| if is_marker(c) { '\u{fffd}' } else { c })
                .collect(),
        )
    } else {
        Cow::Borrowed(text)
    }
}

/// The lines of a paste, as its fold counts them (a final line break ends the last line).
pub(crate) fn line_count(text: &str) -> usize {
    text.lines().count().max(1)
}

/// What a fold shows in place of its text.
pub fn fold_label(text: &str) -> String {
    format!("[pasted {} lines]", line_count(text))
}

/// Text being edited or waiting to be sent, its folded pastes kept apart: what the input box
/// holds, the queued prompt, the history and the last kill.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Draft {
    /// The text, each fold one marker.
    pub(crate) text: String,
    /// The text of each fold, by its marker (markers no longer in `text` may linger).
    pub(crate) pastes: Vec<(char, String)>,
}

impl Draft {
    /// Plain text, no folds (markers in it are replaced).
    pub fn plain(text: &str) -> Draft {
        Draft {
            text: sanitize(text).into_owned(),
            pastes: Vec::new(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The text as shown, each fold one marker character ([`Draft::label`] says what it shows).
    pub fn shown(&self) -> &str {
        &self.text
    }

    /// The whole text: each fold replaced by what was pasted.
    pub fn whole(&self) -> Cow<'_, str> {
        if !self.text.chars().any(is_marker) {
            return Cow::Borrowed(&self.text);
        }
        let mut out = String::with_capacity(self.text.len());
        for c in self.text.chars() {
            match self.paste(c) {
                Some(p) => out.push_str(p),
                None => out.push(c),
            }
        }
        Cow::Owned(out)
    }

    /// What a fold's marker stands for.
    pub(crate) fn paste(&self, marker: char) -> Option<&str> {
        if !is_marker(marker) {
            return None;
        }
        self.pastes
            .iter()
            .find(|(m, _)| *m == marker)
            .map(|(_, p)| p.as_str())
    }

    /// What a fold's marker shows: "[pasted 120 lines]".
    pub fn label(&self, marker: char) -> Option<String> {
        self.paste(marker).map(fold_label)
    }

    /// The first line as shown, folds as their labels, and how many more lines follow.
    pub fn first_line(&self) -> (String, usize) {
        let mut lines = self.text.split('\n');
        let first = lines.next().unwrap_or("");
        let more = lines.count();
        let mut out = String::new();
        for c in first.chars() {
            match self.label(c) {
                Some(l) => out.push_str(&l),
                None => out.push(c),
            }
        }
        (out, more)
    }

    /// Forgets the pastes no fold in the text refers to.
    fn forget_unused(&mut self) {
        let text = &self.text;
        self.pastes.retain(|(m, _)| text.contains(*m));
    }

    /// A marker no paste uses, if one is left.
    fn free_marker(&self) -> Option<char> {
        MARKERS
            .clone()
            .find(|m| self.pastes.iter().all(|(used, _)| used != m))
    }

    /// `src` as text to put into this draft: its folds given markers of this draft (registered
    /// here), or unfolded when none is left.
    pub(crate) fn adopt(&mut self, src: &Draft) -> String {
        self.forget_unused();
        let mut out = String::with_capacity(src.text.len());
        for c in src.text.chars() {
            match src.paste(c) {
                Some(p) => match self.free_marker() {
                    Some(m) => {
                        self.pastes.push((m, p.to_string()));
                        out.push(m);
                    }
                    None => out.push_str(p),
                },
                None if is_marker(c) => out.push('\u{fffd}'),
                None => out.push(c),
            }
        }
        out
    }

    /// A fold of `pasted` (already sanitized) as text to put into this draft, or the text itself
    /// when it is short or no marker is left.
    pub(crate) fn fold(&mut self, pasted: &str) -> String {
        if line_count(pasted) <= FOLD_LINES {
            return pasted.to_string();
        }
        self.forget_unused();
        match self.free_marker() {
            Some(m) => {
                self.pastes.push((m, pasted.to_string()));
                m.to_string()
            }
            None => pasted.to_string(),
        }
    }

    /// The part `start..end` of the text, with the pastes its folds need.
    pub(crate) fn part(&self, start: usize, end: usize) -> Draft {
        let text = self.text[start..end].to_string();
        let pastes = self
            .pastes
            .iter()
            .filter(|(m, _)| text.contains(*m))
            .cloned()
            .collect();
        Draft { text, pastes }
    }

    /// `self` then `other` (`other`'s folds kept as folds).
    pub fn joined(mut self, sep: &str, other: &Draft) -> Draft {
        if !self.text.is_empty() && !other.text.is_empty() {
            self.text.push_str(sep);
        }
        let tail = self.adopt(other);
        self.text.push_str(&tail);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn folds_long_pastes_and_gives_them_back_whole() {
        let mut d = Draft::plain("see: ");
        let short = d.fold("a\nb");
        assert_eq!(short, "a\nb");
        let marker = d.fold(&lines(120));
        assert_eq!(marker.chars().count(), 1);
        d.text.push_str(&marker);
        d.text.push_str(" thanks");
        assert_eq!(d.whole(), format!("see: {} thanks", lines(120)));
        assert_eq!(d.first_line(), ("see: [pasted 120 lines] thanks".to_string(), 0));
    }

    #[test]
    fn markers_typed_or_pasted_are_replaced() {
        let d = Draft::plain("a\u{fdd0}b");
        assert_eq!(d.shown(), "a\u{fffd}b");
        assert_eq!(d.whole(), "a\u{fffd}b");
    }

    #[test]
    fn joining_keeps_both_folds() {
        let mut a = Draft::default();
        let m = a.fold(&lines(10));
        a.text.push_str(&m);
        let mut b = Draft::default();
        let m = b.fold(&lines(7));
        b.text.push_str(&m);
        let j = a.joined("\n", &b);
        assert_eq!(j.text.chars().count(), 3);
        assert_eq!(j.whole(), format!("{}\n{}", lines(10), lines(7)));
    }

    #[test]
    fn past_the_last_marker_pastes_go_in_unfolded() {
        let mut d = Draft::default();
        for _ in 0..40 {
            let t = d.fold(&lines(6));
            d.text.push_str(&t);
        }
        assert_eq!(d.pastes.len(), 32);
        assert_eq!(d.whole(), lines(6).repeat(40));
    }
}

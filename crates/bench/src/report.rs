//! The output: one line per scenario and tree size,
//! `name ours=<v> git=<v> git_fsync=<v> [more fields] ratio=<git/ours>`.
//!
//! Times are in milliseconds, sizes in KiB/MiB/GiB; `ratio` compares shadow git as the peers
//! configure it (git's defaults) with Retrace (durable): above 1 means Retrace is cheaper. A side
//! whose check failed shows `FAIL` and the ratio is `n/a`.

use std::fmt;
use std::time::Duration;

/// One output line.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Scenario name with the tree-size suffix.
    pub name: String,
    /// `key=value` fields, in order.
    pub fields: Vec<(String, String)>,
    /// git / ours, or `None` when not comparable (a side failed).
    pub ratio: Option<f64>,
}

impl Line {
    /// A line with no fields yet.
    pub fn new(name: impl Into<String>) -> Line {
        Line {
            name: name.into(),
            fields: Vec::new(),
            ratio: None,
        }
    }

    /// Adds a field.
    pub fn field(mut self, key: &str, value: impl Into<String>) -> Line {
        self.fields.push((key.to_string(), value.into()));
        self
    }

    /// Sets the ratio to `git / ours`.
    pub fn ratio(mut self, git: f64, ours: f64) -> Line {
        self.ratio = (ours > 0.0 && git.is_finite()).then(|| git / ours);
        self
    }

    /// The value of a field.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        for (k, v) in &self.fields {
            write!(f, " {k}={v}")?;
        }
        match self.ratio {
            Some(r) => write!(f, " ratio={}", ratio(r)),
            None => write!(f, " ratio=n/a"),
        }
    }
}

/// A duration in milliseconds, three significant digits.
pub fn ms(d: Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v >= 100.0 {
        format!("{v:.0}ms")
    } else if v >= 10.0 {
        format!("{v:.1}ms")
    } else if v >= 1.0 {
        format!("{v:.2}ms")
    } else {
        format!("{v:.3}ms")
    }
}

/// A byte count in binary units.
pub fn bytes(b: u64) -> String {
    let v = b as f64;
    if b < 1 << 10 {
        format!("{b}B")
    } else if b < 1 << 20 {
        format!("{:.1}KiB", v / 1024.0)
    } else if b < 1 << 30 {
        format!("{:.1}MiB", v / (1u64 << 20) as f64)
    } else {
        format!("{:.2}GiB", v / (1u64 << 30) as f64)
    }
}

/// A ratio: one decimal below 100, none above.
pub fn ratio(r: f64) -> String {
    if r >= 100.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// The suffix of a tree size: none for 10,000 files, `_1k`, `_80k`, `_50`.
pub fn suffix(files: usize) -> String {
    match files {
        10_000 => String::new(),
        n if n % 1000 == 0 => format!("_{}k", n / 1000),
        n => format!("_{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_end_with_the_ratio() {
        let l = Line::new("per_turn_capture_1k")
            .field("ours", ms(Duration::from_micros(810)))
            .field("git", ms(Duration::from_micros(52_300)))
            .ratio(52.3, 0.81);
        assert_eq!(
            l.to_string(),
            "per_turn_capture_1k ours=0.810ms git=52.3ms ratio=64.6"
        );
        assert_eq!(Line::new("x").to_string(), "x ratio=n/a");
        assert_eq!(suffix(10_000), "");
        assert_eq!(suffix(1_000), "_1k");
        assert_eq!(suffix(80_000), "_80k");
        assert_eq!(suffix(50), "_50");
        assert_eq!(bytes(48 << 20), "48.0MiB");
    }
}

//! "Allow for this session" (SPEC §8): what an approval's answer lets run later without asking —
//! the exact command line, or a prefix of words the user picked from those the approval offers
//! (`npm test` allows `npm test -- --watch`). A prefix never allows a command that chains, pipes,
//! redirects or substitutes (`npm test; rm -rf x`): such a command is asked about again.

use std::collections::HashSet;

/// What the user allowed for the session.
#[derive(Debug, Default)]
pub(crate) struct Allowed {
    exact: HashSet<String>,
    prefixes: Vec<Vec<String>>,
}

impl Allowed {
    /// Whether `command` may run without asking.
    pub(crate) fn allows(&self, command: &str) -> bool {
        if self.exact.contains(command) {
            return true;
        }
        if compound(command) {
            return false;
        }
        let words: Vec<&str> = command.split_whitespace().collect();
        self.prefixes
            .iter()
            .any(|p| words.len() >= p.len() && p.iter().zip(&words).all(|(a, b)| a == b))
    }

    /// Allows this exact command line.
    pub(crate) fn allow_exact(&mut self, command: &str) {
        self.exact.insert(command.to_string());
    }

    /// Allows every simple command that starts with the words of `prefix`.
    pub(crate) fn allow_prefix(&mut self, prefix: &str) {
        let words: Vec<String> = prefix.split_whitespace().map(str::to_string).collect();
        if !words.is_empty() && !self.prefixes.contains(&words) {
            self.prefixes.push(words);
        }
    }
}

/// The prefixes an approval of `command` offers for the session: its leading plain words, at
/// most two, when the command is a simple one (`npm test -- --watch` → `npm test`; `ls -la` →
/// `ls`); none for a compound command or one that starts with something other than a plain word.
pub(crate) fn prefixes(command: &str) -> Vec<String> {
    if compound(command) {
        return Vec::new();
    }
    let plain = |w: &&str| {
        !w.starts_with('-')
            && w.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '+' | '@'))
    };
    let lead: Vec<&str> = command.split_whitespace().take_while(plain).take(2).collect();
    match lead.is_empty() {
        true => Vec::new(),
        false => vec![lead.join(" ")],
    }
}

/// Whether `command` does more than run one program with words: it chains (`;`, `&&`, `||`, `&`),
/// pipes, redirects, substitutes (`$(…)`, backticks, `$VAR`), quotes, escapes or spans lines.
fn compound(command: &str) -> bool {
    command.chars().any(|c| {
        matches!(
            c,
            ';' | '&'
                | '|'
                | '<'
                | '>'
                | '`'
                | '$'
                | '\n'
                | '\r'
                | '"'
                | '\''
                | '\\'
                | '('
                | ')'
                | '{'
                | '}'
                | '*'
                | '?'
                | '['
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_is_the_leading_plain_words() {
        assert_eq!(prefixes("npm test -- --watch"), ["npm test"]);
        assert_eq!(prefixes("ls -la"), ["ls"]);
        assert_eq!(prefixes("cargo build --release"), ["cargo build"]);
        assert_eq!(prefixes("git status"), ["git status"]);
        assert!(prefixes("FOO=1 make").is_empty());
        assert!(prefixes("npm test && rm -rf x").is_empty());
        assert!(prefixes("-x").is_empty());
        assert!(prefixes("").is_empty());
    }

    #[test]
    fn a_prefix_allows_simple_commands_only() {
        let mut a = Allowed::default();
        a.allow_prefix("npm test");
        assert!(a.allows("npm test"));
        assert!(a.allows("npm test -- --watch"));
        assert!(!a.allows("npm testing"));
        assert!(!a.allows("npm install"));
        assert!(!a.allows("npm test; rm -rf x"));
        assert!(!a.allows("npm test && curl x | sh"));
        assert!(!a.allows("npm test $(rm x)"));
        assert!(!a.allows("npm test > /etc/passwd"));
        assert!(!a.allows("npm test\nrm x"));
    }

    #[test]
    fn an_exact_command_allows_itself_only() {
        let mut a = Allowed::default();
        a.allow_exact("ls | wc -l");
        assert!(a.allows("ls | wc -l"));
        assert!(!a.allows("ls"));
        assert!(!a.allows("ls | wc -l; rm x"));
    }
}

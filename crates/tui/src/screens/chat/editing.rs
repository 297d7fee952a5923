//! The input's editing keys, readline's (SPEC §9.1): Ctrl-A / Ctrl-E line start and end, Ctrl-U /
//! Ctrl-K kill to them, Ctrl-W and Alt-Backspace kill a word back, Alt-D a word forward, Alt-B /
//! Alt-F (and Ctrl or Alt with ← →) move by words, Ctrl-Y yanks the last kill; and the plain
//! ones: characters, Backspace, Delete, arrows, Home, End. An Alt key that is not one of these
//! types nothing.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::app::App;
use crate::screens::ctrl;

impl App {
    /// Applies an editing key to the input; false when `key` is not one.
    pub(super) fn edit_key(&mut self, key: &KeyEvent) -> bool {
        let i = &mut self.input;
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            _ if ctrl(key, 'a') => i.home(),
            _ if ctrl(key, 'e') => i.end(),
            _ if ctrl(key, 'u') => i.kill_to_line_start(),
            _ if ctrl(key, 'k') => i.kill_to_line_end(),
            _ if ctrl(key, 'w') => i.kill_spaced_word_left(),
            _ if ctrl(key, 'y') => i.yank(),
            _ if ctrl(key, 'h') => i.backspace(),
            KeyCode::Char('b') if alt && !control => i.word_left(),
            KeyCode::Char('f') if alt && !control => i.word_right(),
            KeyCode::Char('d') if alt && !control => i.kill_word_right(),
            KeyCode::Backspace if alt || control => i.kill_word_left(),
            KeyCode::Left if alt || control => i.word_left(),
            KeyCode::Right if alt || control => i.word_right(),
            // Another Alt key types nothing (Alt-B used to type "b").
            KeyCode::Char(_) if alt || control => {}
            KeyCode::Char(c) => i.insert(c),
            KeyCode::Backspace => i.backspace(),
            KeyCode::Delete => i.delete(),
            KeyCode::Left => i.left(),
            KeyCode::Right => i.right(),
            KeyCode::Home => i.home(),
            KeyCode::End => i.end(),
            _ => return false,
        }
        true
    }
}

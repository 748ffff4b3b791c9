//! Text is data, never control: the one rule for what a name, a reason, a note or an id may
//! hold, the one function every renderer passes stored text through before a terminal sees
//! it, and the one guard that keeps a CSV cell from being a spreadsheet formula.
//!
//! A control character is C0 (U+0000-U+001F, tab and newline included: every free-text field
//! is one line), DEL (U+007F), C1 (U+0080-U+009F), and the bidirectional controls that reorder
//! what a reader sees (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069). Input holding
//! one is refused at the door ([`check`]); text already stored with one is shown with it made
//! visible as `\u{1b}` ([`inert`]), never raw.

use std::borrow::Cow;

/// Whether `c` would act on a terminal (or reorder the text around it) instead of showing.
pub(crate) fn is_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// `c` as it is shown in place of itself: `\u{1b}`.
pub(crate) fn visible(c: char) -> String {
    format!("\\u{{{:x}}}", c as u32)
}

/// `s` with every control character made visible (`ESC` becomes `\u{1b}`); printable text,
/// backslashes included, passes unchanged (and is not copied). Every text rendering of stored
/// or user-given text goes through this: tables, CSV, the live screen, status lines, errors.
pub fn inert(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_control(c) {
            out.push_str(&visible(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The door: a field holding a control character is refused, naming the field and the first
/// such character (`name holds the control character \u{1b}`). The message itself is inert.
pub(crate) fn check(field: &str, value: &str) -> Result<(), String> {
    match value.chars().position(is_control) {
        None => Ok(()),
        Some(at) => {
            let c = value.chars().nth(at).unwrap_or('\0');
            Err(format!(
                "{field} holds the control character {} (character {}): text may not hold control characters",
                visible(c),
                at + 1
            ))
        }
    }
}

/// The most of a bad value an error message quotes: a 1 MB id is named by its start.
pub(crate) const QUOTED_CHARS: usize = 80;

/// `s` as an error message quotes it: at most [`QUOTED_CHARS`] characters, then how many
/// more there were (`E00000000...` and `(999920 more characters)`), made inert.
pub fn clip(s: &str) -> String {
    let n = s.chars().count();
    if n <= QUOTED_CHARS {
        return inert(s).into_owned();
    }
    let head: String = s.chars().take(QUOTED_CHARS).collect();
    format!("{}... ({} more characters)", inert(&head), n - QUOTED_CHARS)
}

/// A CSV cell a spreadsheet reads as a formula (OWASP: it begins with `=`, `+`, `-`, `@`, a tab
/// or a carriage return) gets a leading `'`, which makes it text. Only for text cells: a
/// number the report means as a number is written as it is.
pub(crate) fn spreadsheet_text(s: &str) -> Cow<'_, str> {
    match s.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{s}")),
        _ => Cow::Borrowed(s),
    }
}

/// A count and its noun, singular for one: `1 employee`, `2 employees`, `0 employees`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if let Some(stem) = noun.strip_suffix('y').filter(|s| !s.ends_with(['a', 'e', 'o', 'u'])) {
        format!("{n} {stem}ies")
    } else if ["s", "x", "ch", "sh"].iter().any(|end| noun.ends_with(end)) {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hostile_names_are_made_visible() {
        assert_eq!(inert("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(inert("bell\u{7}"), "bell\\u{7}");
        assert_eq!(inert("x\rerror: y"), "x\\u{d}error: y");
        assert_eq!(inert("\u{202e}olleh"), "\\u{202e}olleh");
        assert_eq!(inert("\u{1b}]52;c;aGk=\u{7}"), "\\u{1b}]52;c;aGk=\\u{7}");
        assert_eq!(inert("tab\there\nnext"), "tab\\u{9}here\\u{a}next");
        assert_eq!(
            inert("c1\u{9b}2J del\u{7f} nul\u{0}"),
            "c1\\u{9b}2J del\\u{7f} nul\\u{0}"
        );
        assert_eq!(
            inert("\u{2066}\u{2069}\u{200e}\u{200f}\u{61c}"),
            "\\u{2066}\\u{2069}\\u{200e}\\u{200f}\\u{61c}"
        );
    }

    #[test]
    fn printable_text_is_not_copied() {
        for s in [
            "Ann Smith",
            "Zoë Ångström",
            "李雷",
            "back\\slash \\u{1b}",
            "",
            "=SUM(1)",
        ] {
            assert!(matches!(inert(s), Cow::Borrowed(_)), "{s}");
        }
    }

    #[test]
    fn check_names_the_field_and_the_character() {
        assert_eq!(check("name", "Ann"), Ok(()));
        assert_eq!(
            check("name", "An\u{1b}n").unwrap_err(),
            "name holds the control character \\u{1b} (character 3): text may not hold control characters"
        );
        assert!(check("note", "a\tb").is_err());
        assert!(check("note", "a\nb").is_err());
        assert!(check("reason", "\u{202e}").is_err());
        assert!(!check("name", "\u{1b}").unwrap_err().contains('\u{1b}'));
    }

    #[test]
    fn formulas_become_text() {
        for s in [
            "=HYPERLINK(\"http://x\",\"y\")",
            "=cmd|' /C calc'!A0",
            "+1+1",
            "-2+3",
            "@SUM(1+1)",
            "\tx",
            "\rx",
        ] {
            assert_eq!(spreadsheet_text(s), format!("'{s}"));
        }
        for s in ["Ann", "1+1", "", "'quoted", " =x"] {
            assert_eq!(spreadsheet_text(s), s);
        }
    }

    proptest! {
        #[test]
        fn output_never_holds_a_control_character(s in any::<String>()) {
            let out = inert(&s);
            prop_assert!(!out.chars().any(is_control), "{:?} -> {:?}", s, out);
            prop_assert_eq!(check("x", &s).is_ok(), out == s);
        }

        #[test]
        fn printable_text_passes_unchanged(s in "[^\\p{Cc}\\u{61c}\\u{200e}\\u{200f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]*") {
            prop_assert_eq!(inert(&s), s.as_str());
        }
    }

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1, "employee"), "1 employee");
        assert_eq!(plural(0, "employee"), "0 employees");
        assert_eq!(plural(2, "calendar day"), "2 calendar days");
        assert_eq!(plural(3, "department queue"), "3 department queues");
        assert_eq!(plural(5, "punch"), "5 punches");
        assert_eq!(plural(4, "entry"), "4 entries");
        assert_eq!(plural(1, "entry"), "1 entry");
    }
}

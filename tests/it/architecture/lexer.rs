//! The small lexer of the `architecture` tests: Rust source with its comments and literals
//! blanked, its `use` trees expanded, its `crate::` paths found. Enough for the shapes this
//! crate's sources use; its own test pins them down.

/// A char that may be part of an identifier.
pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The text with every comment and the inside of every string and char literal replaced by
/// spaces (newlines kept, so line numbers stay right): a URL like `"redis://"` or a doc line
/// naming `crate::mysql::x` is not an import.
pub fn blank_comments_and_strings(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && is_ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
                out.push(' ');
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r'
            && (!prev_ident || (i > 0 && c[i - 1] == 'b' && (i < 2 || !is_ident(c[i - 2]))))
            && matches!(c.get(i + 1), Some('"') | Some('#'))
        {
            // A raw string r"..." or r#"..."#: it ends at a quote and as many hashes.
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            out.push('r');
            for _ in i + 1..=j {
                out.push(' ');
            }
            i = j + 1;
            while i < c.len() {
                if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            // An escaped char literal: up to its closing quote.
            let mut j = i + 2;
            while j < c.len() && c[j] != '\'' {
                j += 1;
            }
            for _ in i..=j.min(c.len() - 1) {
                out.push(' ');
            }
            i = j + 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            // Anything else, a lifetime's quote included, stays.
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The line (from 1) of a char offset.
pub fn line_of(code: &str, at: usize) -> usize {
    code[..at].matches('\n').count() + 1
}

/// The paths one `use` tree names, each in full (`a::{b, c::d as e}` gives `a::b`, `a::c::d`;
/// `self` and `*` name the prefix itself).
pub fn expand_use(tree: &str) -> Vec<String> {
    fn parse(s: &[char], i: &mut usize, prefix: &str, out: &mut Vec<String>) {
        let mut path = prefix.to_string();
        loop {
            let start = *i;
            while *i < s.len() && (is_ident(s[*i]) || s[*i] == '$' || s[*i] == '*') {
                *i += 1;
            }
            let seg: String = s[start..*i].iter().collect();
            if !seg.is_empty() && seg != "self" && seg != "*" {
                if !path.is_empty() {
                    path.push_str("::");
                }
                path.push_str(&seg);
            }
            if s.get(*i) == Some(&':') && s.get(*i + 1) == Some(&':') {
                *i += 2;
                if s.get(*i) == Some(&'{') {
                    *i += 1;
                    loop {
                        parse(s, i, &path, out);
                        match s.get(*i) {
                            Some(',') => {
                                *i += 1;
                                if s.get(*i) == Some(&'}') {
                                    *i += 1;
                                    return;
                                }
                            }
                            Some('}') => {
                                *i += 1;
                                return;
                            }
                            _ => return,
                        }
                    }
                }
                continue;
            }
            // `x as y`: the path is x's.
            if s[*i..].starts_with(&[' ', 'a', 's', ' ']) {
                *i += 4;
                while *i < s.len() && (is_ident(s[*i]) || s[*i] == ' ') {
                    *i += 1;
                }
            }
            out.push(path);
            return;
        }
    }
    // Spaces only matter around `as`.
    let squeezed = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let squeezed = squeezed
        .replace(" ::", "::")
        .replace(":: ", "::")
        .replace("{ ", "{")
        .replace(" }", "}")
        .replace(", ", ",")
        .replace(" ,", ",");
    let s: Vec<char> = squeezed.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    if s.first() == Some(&'{') {
        i = 1;
        loop {
            parse(&s, &mut i, "", &mut out);
            match s.get(i) {
                Some(',') => i += 1,
                _ => break,
            }
            if s.get(i) == Some(&'}') {
                break;
            }
        }
    } else {
        parse(&s, &mut i, "", &mut out);
    }
    out
}

/// Every `use` declaration of a file: (char offset, tree), and the code with those
/// declarations blanked (so their `crate::` paths are not counted twice).
pub fn use_declarations(code: &str) -> (Vec<(usize, String)>, String) {
    let mut found = Vec::new();
    let mut rest = code.to_string();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(k) = code[from..].find("use") {
        let at = from + k;
        from = at + 3;
        let before_ok = at == 0 || !is_ident(bytes[at - 1] as char);
        let after_ok = bytes.get(at + 3).is_some_and(|b| b.is_ascii_whitespace());
        if !before_ok || !after_ok {
            continue;
        }
        let Some(end) = code[at..].find(';') else { break };
        let tree = code[at + 3..at + end].trim().to_string();
        rest.replace_range(at..at + end, &" ".repeat(end));
        found.push((at, tree));
        from = at + end;
    }
    (found, rest)
}

/// `crate::a::b` paths outside `use` declarations: (char offset, path).
pub fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(k) = code[from..].find("crate::") {
        let at = from + k;
        from = at + 7;
        let start = if at > 0 && code.as_bytes()[at - 1] == b'$' {
            at - 1
        } else {
            at
        };
        if start > 0 && is_ident(code.as_bytes()[start - 1] as char) {
            continue;
        }
        let tail: String = code[at..].chars().take_while(|&c| is_ident(c) || c == ':').collect();
        found.push((start, code[start..at].to_string() + tail.trim_end_matches(':')));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_sees_what_it_should() {
        // The lexer and the use-tree expansion, on the shapes the sources use.
        let code = blank_comments_and_strings(
            "use a; // crate::redis::x\nlet u = \"redis::x\"; let c = '\"'; let r = r#\"mysql::\"#; fn f<'a>() {}\n/* amiquip:: */ crate::b::c",
        );
        assert!(
            !code.contains("redis") && !code.contains("mysql") && !code.contains("amiquip"),
            "{code}"
        );
        assert!(code.contains("fn f<'a>()") && code.contains("crate::b::c"), "{code}");
        assert_eq!(code.lines().count(), 3);
        assert_eq!(
            expand_use("crate::{a::{self, B}, c::D as E, f::*}"),
            ["crate::a", "crate::a::B", "crate::c::D", "crate::f"]
        );
        assert_eq!(expand_use("super::Ctx"), ["super::Ctx"]);
        let (uses, _) = use_declarations("pub use crate::x::Y;\nfn reuse() {}\n    use super::*;");
        assert_eq!(
            uses.into_iter().map(|(_, t)| t).collect::<Vec<_>>(),
            ["crate::x::Y", "super::*"]
        );
    }
}

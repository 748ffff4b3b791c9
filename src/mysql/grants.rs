//! The MySQL privileges each role needs on the attendance database (docs/security.md, "MySQL
//! grants" and "MySQL accounts: least privilege"), what an account holds as `SHOW GRANTS`
//! prints it, and the `GRANT` statements that would close the gap; and reading the account a
//! connection runs as with its grants, for `doctor`.

use std::collections::BTreeMap;

use anyhow::Result;
use mysql::prelude::Queryable;

use crate::domain::people::accounts::Role;

/// `CURRENT_USER()` (the account the server matched, `user@host`) and the lines of
/// `SHOW GRANTS` for it (with its enabled roles' on MariaDB).
pub(crate) fn show(conn: &mut impl Queryable) -> Result<(String, Vec<String>)> {
    let account: Option<String> = conn.query_first("SELECT CURRENT_USER()")?;
    let lines: Vec<String> = conn.query("SHOW GRANTS")?;
    Ok((account.unwrap_or_default(), lines))
}

/// What the role needs: privileges on one table, or on the whole database (`None`).
/// `ALL` stands for every privilege (the owner's migrations create and alter tables).
pub(crate) fn needs(role: Role) -> &'static [(&'static [&'static str], Option<&'static str>)] {
    const SELECT: &[&str] = &["SELECT"];
    match role {
        // The shift tables: when Redis's copy of them cannot be read (its master failing
        // over), and for the relay's absence alerts, which read them when an alert is due.
        // The rulebook: read only (`policy set` is the owner's alone), when its Redis copy
        // cannot be read.
        Role::Kiosk => &[
            (SELECT, Some("employees")),
            (SELECT, Some("attendance")),
            (SELECT, Some("shifts")),
            (SELECT, Some("shift_assignments")),
            (SELECT, Some("policy_versions")),
            // A back-dated punch from a key that may not replay is held for review.
            (&["SELECT", "INSERT"], Some("held_punches")),
        ],
        Role::Relay => &[
            (SELECT, Some("employees")),
            (SELECT, Some("leaves")),
            (SELECT, Some("calendar_days")),
            (SELECT, Some("shifts")),
            (SELECT, Some("shift_assignments")),
            (SELECT, Some("policy_versions")),
        ],
        // `correct` judges the day by the employee's shift, refuses a closed pay period, and
        // books the leave of `--leave-kind`; `review approve|reject` decides a member's held
        // punch, `punch void` takes a member's punch off the day; `overtime approve|reject`
        // records its decision.
        Role::Supervisor => &[
            (SELECT, Some("employees")),
            (SELECT, Some("supervisors")),
            (SELECT, Some("calendar_days")),
            (&["SELECT", "INSERT"], Some("leaves")),
            (SELECT, Some("shifts")),
            (SELECT, Some("shift_assignments")),
            (SELECT, Some("pay_periods")),
            (&["SELECT", "UPDATE"], Some("attendance")),
            (&["SELECT", "INSERT"], Some("corrections")),
            (&["SELECT", "INSERT"], Some("overtime_decisions")),
            (&["INSERT"], Some("punch_log")),
            (SELECT, Some("policy_versions")),
            (&["SELECT", "UPDATE"], Some("held_punches")),
            (&["SELECT", "INSERT"], Some("punch_voids")),
        ],
        Role::Hr => &[
            (SELECT, None),
            (&["INSERT", "DELETE"], Some("leaves")),
            (&["INSERT", "UPDATE", "DELETE"], Some("calendar_days")),
            (&["UPDATE"], Some("attendance")),
            (&["INSERT"], Some("corrections")),
            (&["INSERT"], Some("punch_log")),
            (&["INSERT", "UPDATE"], Some("pay_periods")),
            (&["INSERT"], Some("pay_period_audit")),
            (&["INSERT"], Some("overtime_decisions")),
        ],
        Role::Report => &[(SELECT, None)],
        Role::Jobs => &[(&["SELECT", "INSERT", "UPDATE", "DELETE"], None)],
        Role::Owner => &[(&["ALL"], None)],
    }
}

/// What one `GRANT ... ON ...` line gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// Upper case, `ALL` for `ALL PRIVILEGES`; column privileges (`SELECT (a)`) are left out:
    /// they do not give the whole table.
    pub privileges: Vec<String>,
    pub on: Scope,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `*.*`
    Server,
    /// `db.*`, where the name is a LIKE pattern (`_` and `%`, `\` escapes).
    Database(String),
    /// `db.table`
    Table(String, String),
}

/// One line of `SHOW GRANTS`; `None` for what gives no privilege on tables (a role granted,
/// `PROXY`, a routine).
pub(crate) fn parse(line: &str) -> Option<Grant> {
    let rest = line.trim().strip_prefix("GRANT ")?;
    let (privileges, rest) = split_top(rest, " ON ")?;
    let (object, _) = split_top(rest, " TO ")?;
    let on = scope(object.trim())?;
    let mut privs = Vec::new();
    for p in split_all(privileges, ',') {
        let p = p.trim();
        if p.contains('(') {
            continue;
        }
        let p = p.to_ascii_uppercase();
        privs.push(if p == "ALL PRIVILEGES" { "ALL".to_string() } else { p });
    }
    Some(Grant { privileges: privs, on })
}

/// `text` split at the first `sep` outside backticks, quotes and parentheses.
fn split_top<'a>(text: &'a str, sep: &str) -> Option<(&'a str, &'a str)> {
    let (mut quote, mut depth) = (None, 0u32);
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '`' | '\'' | '"') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => depth = depth.saturating_sub(1),
            (None, _) if depth == 0 && text[i..].starts_with(sep) => return Some((&text[..i], &text[i + sep.len()..])),
            _ => {}
        }
    }
    None
}

fn split_all(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some((part, after)) = split_top(rest, &sep.to_string()) {
        parts.push(part);
        rest = after;
    }
    parts.push(rest);
    parts
}

/// `*.*`, `` `db`.* `` or `` `db`.`table` ``; anything else (`PROCEDURE ...`, `''@'%'`) is none.
fn scope(object: &str) -> Option<Scope> {
    if object == "*.*" || object == "*" {
        return Some(Scope::Server);
    }
    let (db, rest) = ident(object)?;
    let table = rest.strip_prefix('.')?;
    if table == "*" {
        return Some(Scope::Database(db));
    }
    match ident(table)? {
        (t, "") => Some(Scope::Table(db, t)),
        _ => None,
    }
}

/// A backquoted (` `` ` doubled inside) or bare identifier, and what follows it.
fn ident(s: &str) -> Option<(String, &str)> {
    if let Some(body) = s.strip_prefix('`') {
        let mut name = String::new();
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                if chars.peek().map(|&(_, n)| n) == Some('`') {
                    chars.next();
                    name.push('`');
                } else {
                    return Some((name, &body[i + 1..]));
                }
            } else {
                name.push(c);
            }
        }
        return None;
    }
    let end = s.find(['.', ' ']).unwrap_or(s.len());
    (end > 0 && !s[..end].contains(['\'', '@', '*'])).then(|| (s[..end].to_string(), &s[end..]))
}

/// MySQL's LIKE on a database grant's name: `%` any run, `_` one character, `\` escapes.
fn like(pattern: &str, name: &str) -> bool {
    fn go(p: &[char], n: &[char]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some(('%', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some(('_', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some(('\\', rest)) if !rest.is_empty() => n.first() == rest.first() && go(&rest[1..], &n[1..]),
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    go(&p, &n)
}

/// Whether the grants give `privilege` on `table` of `db` (`None`: on the whole database).
fn holds(grants: &[Grant], db: &str, table: Option<&str>, privilege: &str) -> bool {
    grants.iter().any(|g| {
        let applies = match (&g.on, table) {
            (Scope::Server, _) => true,
            (Scope::Database(p), _) => like(p, db),
            (Scope::Table(d, t), Some(table)) => d == db && t == table,
            (Scope::Table(..), None) => false,
        };
        applies && g.privileges.iter().any(|p| p == privilege || p == "ALL")
    })
}

/// What `role` needs on `db` that `grants` do not give: per table (`None`: the database),
/// the privileges missing.
pub(crate) fn missing(role: Role, grants: &[Grant], db: &str) -> Vec<(Option<&'static str>, Vec<&'static str>)> {
    let mut gaps: BTreeMap<Option<&'static str>, Vec<&'static str>> = BTreeMap::new();
    for (privileges, table) in needs(role) {
        for p in privileges.iter().filter(|p| !holds(grants, db, *table, p)) {
            gaps.entry(*table).or_default().push(p);
        }
    }
    gaps.into_iter().collect()
}

/// The statements that give the missing privileges to `account` (`'user'@'host'`).
pub(crate) fn statements(gaps: &[(Option<&str>, Vec<&str>)], db: &str, account: &str) -> Vec<String> {
    let quoted = |name: &str| format!("`{}`", name.replace('`', "``"));
    gaps.iter()
        .map(|(table, privs)| {
            let on = match table {
                Some(t) => format!("{}.{}", quoted(db), quoted(t)),
                None => format!("{}.*", quoted(db)),
            };
            format!("GRANT {} ON {on} TO {account};", privs.join(", "))
        })
        .collect()
}

/// `user@host` (as `CURRENT_USER()` gives it) quoted for a statement: `'user'@'host'`.
pub(crate) fn account(current_user: &str) -> String {
    let (user, host) = current_user.rsplit_once('@').unwrap_or((current_user, "%"));
    format!("'{}'@'{}'", user.replace('\'', "''"), host.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grants(lines: &[&str]) -> Vec<Grant> {
        lines.iter().filter_map(|l| parse(l)).collect()
    }

    #[test]
    fn show_grants_lines_are_read_as_mariadb_and_mysql_print_them() {
        let g = parse("GRANT USAGE ON *.* TO `k`@`localhost` IDENTIFIED BY PASSWORD '*AB'").unwrap();
        assert_eq!((g.privileges, g.on), (vec!["USAGE".to_string()], Scope::Server));
        let g = parse("GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION").unwrap();
        assert_eq!(g.privileges, ["ALL"]);
        let g = parse("GRANT SELECT, UPDATE ON `att``x`.`attendance` TO `s`@`%`").unwrap();
        assert_eq!(g.on, Scope::Table("att`x".into(), "attendance".into()));
        assert_eq!(g.privileges, ["SELECT", "UPDATE"]);
        let g = parse("GRANT SELECT (`id`, `name`), INSERT ON `d`.`employees` TO `s`@`%`").unwrap();
        assert_eq!(g.privileges, ["INSERT"], "a column privilege is not the table's");
        let g = parse("GRANT SELECT,INSERT ON d.* TO u@'%'").unwrap();
        assert_eq!(
            (g.privileges, g.on),
            (vec!["SELECT".into(), "INSERT".into()], Scope::Database("d".into()))
        );
        assert_eq!(parse("GRANT `hr_role` TO `u`@`%`"), None);
        assert_eq!(
            parse("GRANT PROXY ON ''@'%' TO 'root'@'localhost' WITH GRANT OPTION"),
            None
        );
        assert_eq!(parse("GRANT EXECUTE ON PROCEDURE `d`.`p` TO `u`@`%`"), None);
    }

    #[test]
    fn each_role_is_covered_by_the_grants_docs_security_gives_it() {
        let kiosk = grants(&[
            "GRANT USAGE ON *.* TO `k`@`%`",
            "GRANT SELECT ON `att`.`employees` TO `k`@`%`",
            "GRANT SELECT ON `att`.`attendance` TO `k`@`%`",
            "GRANT SELECT ON `att`.`shifts` TO `k`@`%`",
            "GRANT SELECT ON `att`.`shift_assignments` TO `k`@`%`",
            "GRANT SELECT ON `att`.`policy_versions` TO `k`@`%`",
            "GRANT SELECT, INSERT ON `att`.`held_punches` TO `k`@`%`",
        ]);
        assert!(missing(Role::Kiosk, &kiosk, "att").is_empty());
        assert_eq!(
            missing(Role::Kiosk, &kiosk, "other").len(),
            6,
            "grants on another database do not count"
        );
        let gaps = missing(Role::Supervisor, &kiosk, "att");
        assert_eq!(
            statements(&gaps, "att", &account("k@%")),
            [
                "GRANT UPDATE ON `att`.`attendance` TO 'k'@'%';",
                "GRANT SELECT ON `att`.`calendar_days` TO 'k'@'%';",
                "GRANT SELECT, INSERT ON `att`.`corrections` TO 'k'@'%';",
                "GRANT UPDATE ON `att`.`held_punches` TO 'k'@'%';",
                "GRANT SELECT, INSERT ON `att`.`leaves` TO 'k'@'%';",
                "GRANT SELECT, INSERT ON `att`.`overtime_decisions` TO 'k'@'%';",
                "GRANT SELECT ON `att`.`pay_periods` TO 'k'@'%';",
                "GRANT INSERT ON `att`.`punch_log` TO 'k'@'%';",
                "GRANT SELECT, INSERT ON `att`.`punch_voids` TO 'k'@'%';",
                "GRANT SELECT ON `att`.`supervisors` TO 'k'@'%';",
            ]
        );
        let owner = grants(&["GRANT ALL PRIVILEGES ON `att`.* TO `o`@`%`"]);
        for role in Role::ALL {
            assert!(missing(role, &owner, "att").is_empty(), "{role:?}");
        }
        let jobs = grants(&["GRANT SELECT, INSERT, UPDATE, DELETE ON `att`.* TO `j`@`%`"]);
        assert!(missing(Role::Hr, &jobs, "att").is_empty());
        assert_eq!(missing(Role::Owner, &jobs, "att"), [(None, vec!["ALL"])]);
    }

    #[test]
    fn a_database_grant_is_a_like_pattern() {
        let g = grants(&["GRANT SELECT ON `att\\_%`.* TO `r`@`%`"]);
        assert!(missing(Role::Report, &g, "att_test1").is_empty());
        assert!(
            !missing(Role::Report, &g, "attxtest").is_empty(),
            "an escaped _ is itself"
        );
        let g = grants(&["GRANT SELECT ON `att_db`.* TO `r`@`%`"]);
        assert!(missing(Role::Report, &g, "att_db").is_empty());
        assert!(
            missing(Role::Report, &g, "att-db").is_empty(),
            "an unescaped _ is any character"
        );
    }

    #[test]
    fn every_role_has_a_name_it_is_parsed_back_from() {
        for role in Role::ALL {
            assert_eq!(Role::parse(role.name()), Some(role));
        }
        assert_eq!(Role::parse("nobody"), None);
    }
}

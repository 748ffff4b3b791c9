//! `doctor`'s MySQL grants check: what the account it runs as holds (`SHOW GRANTS`) against
//! what its role needs (docs/security.md); a privilege missing is a warning that names the
//! role and the `GRANT` statements to run. Without `--role`, the roles the grants cover are
//! named, or, when they cover none, what the closest role lacks.

use super::verdict::{check, Check, Level};
use crate::config::Config;
use crate::domain::people::accounts::Role;
use crate::mysql::grants::{self, Grant, Scope};
use crate::mysql::Conn;
use crate::ops::exit::one_line;

const NAME: &str = "mysql grants";

pub(super) fn verdict(cfg: &Config, mysql: Option<&mut Conn>, role: Option<Role>) -> Check {
    let Some(conn) = mysql else {
        return check(NAME, Level::Skip, "not checked: MySQL is not usable");
    };
    let (user, lines) = match crate::mysql::grants::show(conn) {
        Ok(read) => read,
        Err(e) => return check(NAME, Level::Warn, format!("SHOW GRANTS failed: {}", one_line(&e))),
    };
    let db = cfg.mysql_database().unwrap_or_default();
    let held: Vec<Grant> = lines.iter().filter_map(|l| grants::parse(l)).collect();
    judge(&user, &db, &held, role)
}

/// The verdict for account `user` (`user@host`) on database `db`.
fn judge(user: &str, db: &str, held: &[Grant], role: Option<Role>) -> Check {
    let gaps = |r: Role| grants::missing(r, held, db);
    let count = |r: Role| gaps(r).iter().map(|(_, p)| p.len()).sum::<usize>();
    let wide = held
        .iter()
        .any(|g| g.on == Scope::Server && g.privileges.iter().any(|p| p != "USAGE"));
    let wide = match wide {
        true => "; it also holds privileges on every database (*.*), more than any role needs",
        false => "",
    };
    let role = match role {
        Some(r) => r,
        None => {
            let covered: Vec<&str> = Role::ALL
                .into_iter()
                .filter(|&r| count(r) == 0)
                .map(Role::name)
                .collect();
            let which = match covered.len() {
                0 => None,
                n if n == Role::ALL.len() => Some("every role".to_string()),
                1 => Some(format!("role {}", covered[0])),
                _ => Some(format!("roles {}", covered.join(", "))),
            };
            if let Some(which) = which {
                return check(
                    NAME,
                    Level::Ok,
                    format!("{user} on {db}: enough for {which}{wide}; name this host's role with --role to check it"),
                );
            }
            let closest = Role::ALL.into_iter().min_by_key(|&r| count(r)).unwrap_or(Role::Report);
            return lacking(
                user,
                db,
                held,
                closest,
                &format!("role {} (the closest; name yours with --role)", closest.name()),
            );
        }
    };
    match gaps(role).is_empty() {
        true => check(
            NAME,
            Level::Ok,
            format!("{user} on {db}: enough for role {}{wide}", role.name()),
        ),
        false => lacking(user, db, held, role, &format!("role {}", role.name())),
    }
}

/// The warning: what `role` lacks, as the statements that give it.
fn lacking(user: &str, db: &str, held: &[Grant], role: Role, taken: &str) -> Check {
    let run = grants::statements(&grants::missing(role, held, db), db, &grants::account(user)).join(" ");
    check(
        NAME,
        Level::Warn,
        format!("{user} on {db} lacks what {taken} needs (docs/security.md); as an administrator, run: {run}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(lines: &[&str]) -> Vec<Grant> {
        lines.iter().filter_map(|l| grants::parse(l)).collect()
    }

    #[test]
    fn a_missing_privilege_names_the_role_and_the_grant_to_run() {
        let kiosk = held(&[
            "GRANT SELECT ON `att`.`employees` TO `k`@`%`",
            "GRANT SELECT ON `att`.`shifts` TO `k`@`%`",
            "GRANT SELECT ON `att`.`shift_assignments` TO `k`@`%`",
            "GRANT SELECT ON `att`.`policy_versions` TO `k`@`%`",
            "GRANT SELECT, INSERT ON `att`.`held_punches` TO `k`@`%`",
        ]);
        let c = judge("k@%", "att", &kiosk, Some(Role::Kiosk));
        assert_eq!(c.status, Level::Warn);
        assert!(c.detail.contains("role kiosk"), "{}", c.detail);
        assert!(
            c.detail
                .ends_with("run: GRANT SELECT ON `att`.`attendance` TO 'k'@'%';"),
            "{}",
            c.detail
        );
        let c = judge("k@%", "att", &kiosk, None);
        assert_eq!(c.status, Level::Warn);
        assert!(c.detail.contains("role kiosk (the closest"), "{}", c.detail);
    }

    #[test]
    fn server_wide_grants_are_enough_and_said_to_be_more() {
        let root = held(&["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"]);
        let c = judge("root@localhost", "att", &root, None);
        assert_eq!(c.status, Level::Ok);
        assert!(
            c.detail
                .contains("enough for every role; it also holds privileges on every database"),
            "{}",
            c.detail
        );
    }

    #[test]
    fn grants_enough_for_a_role_are_ok_and_say_which() {
        let hr = held(&[
            "GRANT SELECT ON `att`.* TO `h`@`%`",
            "GRANT INSERT, DELETE ON `att`.`leaves` TO `h`@`%`",
            "GRANT INSERT, UPDATE, DELETE ON `att`.`calendar_days` TO `h`@`%`",
            "GRANT UPDATE ON `att`.`attendance` TO `h`@`%`",
            "GRANT INSERT ON `att`.`corrections` TO `h`@`%`",
            "GRANT INSERT ON `att`.`punch_log` TO `h`@`%`",
            "GRANT INSERT, UPDATE ON `att`.`pay_periods` TO `h`@`%`",
            "GRANT INSERT ON `att`.`pay_period_audit` TO `h`@`%`",
            "GRANT INSERT ON `att`.`overtime_decisions` TO `h`@`%`",
        ]);
        let c = judge("h@%", "att", &hr, None);
        assert_eq!(c.status, Level::Ok);
        assert!(c.detail.contains("enough for roles relay, report, hr;"), "{}", c.detail);
        assert_eq!(judge("h@%", "att", &hr, Some(Role::Hr)).status, Level::Ok);
        let c = judge("h@%", "att", &hr, Some(Role::Jobs));
        assert!(
            c.detail
                .ends_with("run: GRANT INSERT, UPDATE, DELETE ON `att`.* TO 'h'@'%';"),
            "{}",
            c.detail
        );
    }
}

//! Who may act on whose day: the acting employee is the one the roster maps to the operating
//! system account running the command (never a name the caller types), and the rules of who
//! may correct whom. Pure: the caller reads the roster.

use crate::domain::people::roster::Role;

/// The employee acting, as the roster maps the account running the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Actor {
    pub employee_id: String,
    pub role: Role,
}

/// May `actor` correct `target`'s day, whose department's supervisor is `supervisor`? Nobody
/// corrects their own day; the department's supervisor corrects its members; HR corrects
/// anyone else's day, a supervisor's included. The refusal says why, in one line.
pub(crate) fn may_correct(actor: &Actor, target: &str, supervisor: Option<&str>) -> Result<(), String> {
    may_act(actor, target, supervisor, ("correct their own day", "correct this day"))
}

/// May `actor` void `target`'s punch before settle? The same rule as [`may_correct`].
pub(crate) fn may_void(actor: &Actor, target: &str, supervisor: Option<&str>) -> Result<(), String> {
    may_act(actor, target, supervisor, ("void their own punch", "void this punch"))
}

/// May `actor` approve or reject `target`'s punch held for review? The same rule as
/// [`may_correct`]: nobody decides on their own punch.
pub(crate) fn may_review(actor: &Actor, target: &str, supervisor: Option<&str>) -> Result<(), String> {
    may_act(
        actor,
        target,
        supervisor,
        ("review their own punch", "review this punch"),
    )
}

fn may_act(actor: &Actor, target: &str, supervisor: Option<&str>, (own, this): (&str, &str)) -> Result<(), String> {
    if actor.employee_id == target {
        return Err(format!(
            "{target} may not {own}: their department's supervisor or HR does"
        ));
    }
    if actor.role == Role::Hr || supervisor == Some(actor.employee_id.as_str()) {
        return Ok(());
    }
    Err(format!(
        "{} is neither the supervisor of {target}'s department nor HR: only they may {this}",
        actor.employee_id
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actor(id: &str, role: Role) -> Actor {
        Actor {
            employee_id: id.into(),
            role,
        }
    }

    #[test]
    fn nobody_corrects_their_own_day_not_even_hr_or_a_supervisor() {
        for role in [Role::Employee, Role::Supervisor, Role::Hr] {
            let e = may_correct(&actor("E1", role), "E1", Some("E1")).unwrap_err();
            assert!(e.contains("own day"), "{e}");
        }
    }

    #[test]
    fn the_departments_supervisor_and_hr_correct_a_member_and_no_one_else_does() {
        assert!(may_correct(&actor("S1", Role::Supervisor), "E2", Some("S1")).is_ok());
        assert!(may_correct(&actor("H1", Role::Hr), "E2", Some("S1")).is_ok());
        assert!(
            may_correct(&actor("H1", Role::Hr), "S1", Some("S1")).is_ok(),
            "HR corrects a supervisor"
        );
        assert!(may_correct(&actor("S2", Role::Supervisor), "E2", Some("S1")).is_err());
        assert!(may_correct(&actor("E3", Role::Employee), "E2", Some("S1")).is_err());
        assert!(may_correct(&actor("E3", Role::Employee), "E2", None).is_err());
    }
}

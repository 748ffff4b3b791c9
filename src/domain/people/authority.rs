//! Who may act on whose day: the acting employee is the one the roster maps to the operating
//! system account running the command (never a name the caller types), and the rules of who
//! may correct whom and when. Pure: the caller reads the roster and the server's clock.

use chrono::NaiveDate;

use crate::domain::people::employment::Employment;
use crate::domain::people::roster::Role;

/// The employee acting, as the roster maps the account running the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Actor {
    pub employee_id: String,
    pub role: Role,
    pub employment: Employment,
}

/// Authority lasts as long as employment: may `actor` act `today` on `target`'s `day`, whose
/// employment is `target_employment`? The actor must be employed today (a leaver has no
/// authority left, a joiner none yet) and on `day` (nobody vouches for a day before they came
/// or after they went), and `day` must be one of the target's days (outside them there is no
/// day of theirs to change). The refusal says why, in one line.
pub(crate) fn employed_to_act(
    actor: &Actor,
    target: &str,
    target_employment: Employment,
    today: NaiveDate,
    day: NaiveDate,
) -> Result<(), String> {
    let who = &actor.employee_id;
    match (actor.employment.start, actor.employment.end) {
        (_, Some(end)) if end < today => {
            return Err(format!(
                "{who} left on {end} (their end date): a leaver has no authority to act on anyone's day"
            ))
        }
        (Some(start), _) if today < start => {
            return Err(format!(
                "{who} starts on {start}: no authority to act on anyone's day before their first day"
            ))
        }
        _ => {}
    }
    if !actor.employment.covers(day) {
        return Err(format!(
            "{who} was not employed on {day}: only someone employed on a day may act on it"
        ));
    }
    if !target_employment.covers(day) {
        return Err(format!(
            "{target} was not employed on {day}: there is no day of theirs to act on"
        ));
    }
    Ok(())
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

/// May `actor` approve or reject `target`'s overtime? The same rule as [`may_correct`].
pub(crate) fn may_decide_overtime(actor: &Actor, target: &str, supervisor: Option<&str>) -> Result<(), String> {
    may_act(
        actor,
        target,
        supervisor,
        ("decide on their own overtime", "decide on this overtime"),
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
            employment: Employment::default(),
        }
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn authority_lasts_as_long_as_both_employments_cover_the_days() {
        let today = d("2026-12-10");
        let open = Employment::default();
        let until = |end: &str| Employment::new(None, Some(d(end)));
        let from = |start: &str| Employment::new(Some(d(start)), None);
        let with = |employment| Actor {
            employment,
            ..actor("S1", Role::Supervisor)
        };
        let ok = |a: &Actor, t: Employment, day: &str| employed_to_act(a, "E2", t, today, d(day));
        assert_eq!(ok(&with(open), open, "2026-12-01"), Ok(()));
        // The last day of employment is still one of its days.
        assert_eq!(ok(&with(until("2026-12-10")), open, "2026-12-01"), Ok(()));
        let e = ok(&with(until("2026-12-09")), open, "2026-12-01").unwrap_err();
        assert!(e.contains("S1 left on 2026-12-09") && e.contains("leaver"), "{e}");
        let e = ok(&with(from("2026-12-11")), open, "2026-12-01").unwrap_err();
        assert!(e.contains("S1 starts on 2026-12-11"), "{e}");
        let e = ok(&with(from("2026-12-05")), open, "2026-12-01").unwrap_err();
        assert!(e.contains("S1 was not employed on 2026-12-01"), "{e}");
        let e = ok(&with(open), until("2026-11-30"), "2026-12-01").unwrap_err();
        assert!(e.contains("E2 was not employed on 2026-12-01"), "{e}");
        let e = ok(&with(open), from("2026-12-02"), "2026-12-01").unwrap_err();
        assert!(e.contains("E2 was not employed on 2026-12-01"), "{e}");
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

//! The policy rows of the key table (`policy.*`) as the rulebook's keys: a value given to
//! `policy set` is checked with the same bounds a config file's was, and the values in force
//! on a date become the [`Policy`] that day is judged by. Files and the environment no longer
//! set these keys (`config::environment`, `config::file`): the rulebook in MySQL does.

use chrono::NaiveDate;
use toml::Value;

use super::settable::{self, Raw};
use super::{Config, Policy};
use crate::domain::day::rulebook::Rulebook;
use crate::error::Error;

/// What every policy key's name starts with.
pub(crate) const PREFIX: &str = "policy.";

/// Whether `name` is a policy key (`policy.grace_minutes`) rather than this host's own setting.
pub(crate) fn is_policy_key(name: &str) -> bool {
    name.starts_with(PREFIX)
}

/// Every policy key, in the key table's order.
pub(crate) fn keys() -> impl Iterator<Item = &'static str> {
    settable::KEYS.iter().map(|k| k.name).filter(|n| is_policy_key(n))
}

/// The line that refuses a policy key where only host settings belong (a config file, an
/// `ATTENDANCE_POLICY_*` variable): the company's rules are set in one place.
pub(crate) fn refusal(key: &str, source: &str) -> Error {
    Error::input(format!(
        "config: {key} ({source}) is company policy, not a host setting: remove it and run \
         `attendance policy set {key} VALUE --from DATE --reason TEXT` (docs/policy.md)"
    ))
}

/// A value as `policy show` prints it and the rulebook stores it: text, a number, true or
/// false, a list comma-separated.
fn shown(v: Value) -> String {
    match v {
        Value::String(s) => s,
        Value::Array(a) => a.into_iter().map(shown).collect::<Vec<_>>().join(","),
        v => v.to_string(),
    }
}

/// `key`'s value in `policy`, as [`shown`].
pub(crate) fn value_of(key: &str, policy: &Policy) -> String {
    let cfg = Config {
        policy: policy.clone(),
        ..Config::default()
    };
    settable::find(key)
        .and_then(|k| k.value(&cfg))
        .map(shown)
        .unwrap_or_default()
}

/// `value` for `key`, checked by the key table's row (its bounds, its type), as it will be
/// stored; refused (exit 2) for an unknown key or a value out of bounds.
pub(crate) fn check(key: &str, value: &str) -> Result<String, Error> {
    let row = settable::find(key).filter(|_| is_policy_key(key)).ok_or_else(|| {
        Error::input(format!(
            "policy: unknown key '{key}' (one of {})",
            keys().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let mut cfg = Config::default();
    row.apply(&mut cfg, &Raw::Env(value.to_string()), "policy set")
        .map_err(|e| Error::input(e.to_string().replacen("config: ", "policy: ", 1)))?;
    // An explicit split is stored as given; its default (the midpoint) is not a value.
    Ok(value_of(key, &cfg.policy))
}

/// The policy `date` is judged by: `base` (the built-in defaults), then every value of the
/// rulebook in force on `date`, each through its key's row.
pub(crate) fn policy_on(base: &Policy, book: &Rulebook, date: NaiveDate) -> Result<Policy, Error> {
    let mut cfg = Config {
        policy: base.clone(),
        ..Config::default()
    };
    let source = format!("the rulebook on {date}");
    for (key, value) in book.in_force(date) {
        let row = settable::find(key)
            .filter(|_| is_policy_key(key))
            .ok_or_else(|| Error::internal(format!("the rulebook holds an unknown key '{key}'")))?;
        row.apply(&mut cfg, &Raw::Env(value.to_string()), &source)?;
    }
    cfg.check_policy()
        .map_err(|e| Error::input(e.to_string().replacen("config: ", "policy: ", 1)))?;
    Ok(cfg.policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::rulebook::Version;

    #[test]
    fn values_are_checked_by_the_key_tables_bounds_and_stored_as_shown() {
        assert_eq!(check("policy.grace_minutes", "15").unwrap(), "15");
        assert_eq!(check("policy.work_days", "mon, tue,sat").unwrap(), "mon,tue,sat");
        assert_eq!(check("policy.absence_alerts", "off").unwrap(), "false");
        let e = check("policy.grace_minutes", "241").unwrap_err().to_string();
        assert!(e.contains("policy.grace_minutes") && e.contains("0 to 240"), "{e}");
        let e = check("redis_url", "redis://x/").unwrap_err().to_string();
        assert!(e.contains("unknown key 'redis_url'"), "{e}");
        assert!(keys().all(is_policy_key) && keys().count() >= 13);
    }

    #[test]
    fn a_day_is_judged_by_the_values_in_force_on_it_and_a_clash_between_keys_is_refused() {
        let v = |key: &str, value: &str, from: &str| Version {
            key: key.into(),
            value: value.into(),
            from: from.parse().unwrap(),
        };
        let mut book = Rulebook {
            versions: vec![v("policy.grace_minutes", "5", "2026-03-01")],
        };
        let on = |book: &Rulebook, d: &str| policy_on(&Policy::default(), book, d.parse().unwrap());
        assert_eq!(on(&book, "2026-02-28").unwrap().grace_minutes, 0);
        assert_eq!(on(&book, "2026-03-01").unwrap().grace_minutes, 5);
        book.versions.push(v("policy.checkout_from", "08:00", "2026-04-01"));
        assert!(on(&book, "2026-03-31").is_ok());
        let e = on(&book, "2026-04-01").unwrap_err().to_string();
        assert!(e.starts_with("policy: ") && e.contains("policy.checkout_from"), "{e}");
    }
}

//! The `ATTENDANCE_*` variables as a whole: a value that is not UTF-8 or is empty is an error
//! naming the variable (never silently the default), and a variable no key reads is a warning
//! naming the closest key (a typo such as `ATTENDANCE_NAMESPCE` would otherwise leave the
//! default in force without a word).

use std::ffi::OsString;

use super::settable;
use crate::error::Error;

use super::settable::PREFIX;

/// Variables read outside the key table: the config file's name, and settle's and org
/// import's fault-injection hooks and the reports' slice for the tests (docs/settle.md, docs/commands.md). `ATTENDANCE_TEST_*` belong to the test suite.
const OTHERS: &[&str] = &[
    "ATTENDANCE_CONFIG",
    "ATTENDANCE_SETTLE_ABORT_AFTER_CUTOVERS",
    "ATTENDANCE_SETTLE_ABORT_AFTER_BATCHES",
    "ATTENDANCE_SETTLE_ABORT_AFTER_DELETES",
    "ATTENDANCE_ORG_ABORT_BEFORE_MOVES",
    // How many employees the month sheet and payroll read at a time (docs/reports.md).
    "ATTENDANCE_REPORT_SLICE",
    // scripts/demo.sh's binary, read by the script, present in the environment it runs.
    "ATTENDANCE_BIN",
];

/// Refuse an `ATTENDANCE_*` variable whose value is not UTF-8 or is empty.
pub fn check(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Result<(), Error> {
    for (name, value) in vars {
        let Some(name) = name.to_str().filter(|n| n.starts_with(PREFIX)) else {
            continue;
        };
        match value.to_str() {
            None => {
                return Err(Error::input(format!(
                    "config: {name} holds bytes that are not UTF-8: give it as text"
                )))
            }
            Some("") => {
                return Err(Error::input(format!(
                    "config: {name} is set but empty: give it a value or unset it"
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A warning for each `ATTENDANCE_*` variable that nothing reads, naming the closest key's. A
/// name closest to a company rule's is pointed at the rulebook instead: its variable is refused
/// (no caller sets the rules), so suggesting it would trade a warning for an error.
pub(crate) fn unknown(names: impl IntoIterator<Item = OsString>) -> Vec<String> {
    // Most processes have no stray variable: find one before building the lists to name it by.
    let stray: Vec<String> = names
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .filter(|n| {
            n.starts_with(PREFIX)
                && !n.starts_with("ATTENDANCE_TEST_")
                && !OTHERS.contains(&n.as_str())
                && !settable::KEYS.iter().any(|k| k.is_env_var(n))
        })
        .collect();
    if stray.is_empty() {
        return Vec::new();
    }
    let (rules, settings): (Vec<&settable::Key>, Vec<&settable::Key>) =
        settable::KEYS.iter().partition(|k| k.name.starts_with("policy."));
    let known: Vec<String> = settings
        .iter()
        .map(|k| k.env_var())
        .chain(OTHERS.iter().map(|s| s.to_string()))
        .collect();
    let rule_vars: Vec<(String, &str)> = rules.iter().map(|k| (k.env_var(), k.name)).collect();
    let mut warnings = Vec::new();
    for name in &stray {
        let name = name.as_str();
        let nearest_setting = known.iter().map(|k| distance(k, name)).min().unwrap_or(usize::MAX);
        let nearest_rule = rule_vars.iter().min_by_key(|(v, _)| distance(v, name));
        match nearest_rule {
            Some((v, key)) if distance(v, name) < nearest_setting => warnings.push(format!(
                "warning: {name} is not a setting and is ignored; the company's rules are the rulebook's: \
                 `attendance policy set {key} VALUE --from DATE --reason R`"
            )),
            _ => {
                let closest = did_you_mean(name, known.iter().cloned());
                warnings.push(format!("warning: {name} is not a setting and is ignored{closest}"));
            }
        }
    }
    warnings.sort();
    warnings
}

/// `; did you mean KEY?` for the known name closest to `name` (a variable's or a file key's:
/// the same rule for both layers), or nothing when none is known.
pub(super) fn did_you_mean(name: &str, known: impl IntoIterator<Item = String>) -> String {
    known
        .into_iter()
        .min_by_key(|k| distance(k, name))
        .map_or(String::new(), |k| format!("; did you mean {k}?"))
}

/// Levenshtein distance over bytes (the names are ASCII).
fn distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.bytes().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &[u8])]) -> Vec<(OsString, OsString)> {
        use std::os::unix::ffi::OsStringExt;
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from_vec(v.to_vec())))
            .collect()
    }

    #[test]
    fn each_key_knows_its_variable_and_no_other() {
        for key in settable::KEYS {
            let var = key.env_var();
            assert!(key.is_env_var(&var), "{var}");
            assert!(!key.is_env_var(&var[..var.len() - 1]), "{var}");
            assert!(!key.is_env_var(&format!("{var}X")), "{var}");
            assert!(!key.is_env_var(&var.to_lowercase()), "{var}");
            let others = settable::KEYS.iter().filter(|k| k.is_env_var(&var)).count();
            assert_eq!(others, 1, "{var} is one key's");
        }
        let names = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(unknown(names(&["ATTENDANCE_NAMESPACE", "ATTENDANCE_TEST_X", "HOME"])).is_empty());
        let w = unknown(names(&["ATTENDANCE_NAMESPCE", "ATTENDANCE_NAMESPACE"]));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("did you mean ATTENDANCE_NAMESPACE"), "{w:?}");
    }

    #[test]
    fn a_value_that_is_not_text_or_is_empty_is_refused_by_name() {
        assert!(check(os(&[("ATTENDANCE_NAMESPACE", b"x"), ("OTHER", b"\xff")])).is_ok());
        let e = check(os(&[("ATTENDANCE_POLICY_GRACE_MINUTES", b"\xff")])).unwrap_err();
        assert!(
            e.to_string().contains("ATTENDANCE_POLICY_GRACE_MINUTES holds bytes"),
            "{e}"
        );
        let e = check(os(&[("ATTENDANCE_REDIS_URL", b"")])).unwrap_err();
        assert!(e.to_string().contains("ATTENDANCE_REDIS_URL is set but empty"), "{e}");
    }

    #[test]
    fn a_misspelt_variable_is_named_with_the_closest_key() {
        let names = [
            "ATTENDANCE_NAMESPCE",
            "ATTENDANCE_NAMESPACE",
            "PATH",
            "ATTENDANCE_TEST_X",
        ];
        let w = unknown(names.iter().map(OsString::from));
        assert_eq!(
            w,
            ["warning: ATTENDANCE_NAMESPCE is not a setting and is ignored; did you mean ATTENDANCE_NAMESPACE?"]
        );
    }

    #[test]
    fn a_misspelt_rule_is_pointed_at_the_rulebook_never_at_a_variable_that_is_refused() {
        // Regression: the warning suggested ATTENDANCE_POLICY_GRACE_MINUTES, which is refused
        // (exit 2): the company's rules are set in the rulebook alone.
        let w = unknown(["ATTENDANCE_POLCY_GRACE_MINUTES"].iter().map(OsString::from));
        assert_eq!(
            w,
            [
                "warning: ATTENDANCE_POLCY_GRACE_MINUTES is not a setting and is ignored; the company's rules are the \
              rulebook's: `attendance policy set policy.grace_minutes VALUE --from DATE --reason R`"
            ]
        );
        // The rule's own variable is refused elsewhere (config), not warned about here.
        assert!(unknown(["ATTENDANCE_POLICY_GRACE_MINUTES"].iter().map(OsString::from)).is_empty());
    }
}

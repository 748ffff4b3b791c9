//! `attendance metrics` against the real stores: the day's check-ins recorded and held, the
//! notifications queued per department (bounded), parked and pending, each store's answer and
//! the build, in a text format parsed strictly here (and by `promtool check metrics` where
//! Prometheus's promtool is installed).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use chrono::{Duration, Utc};
use common::TestEnv;

const ROSTER: &str = "employee_id,name,department_id,department_name,role\n\
    S1,Ann,D1,Sales,supervisor\nA1,Bob,D1,Sales,employee\nA2,Cy,D1,Sales,employee\n\
    S2,Di,D2,Ops,supervisor\nB1,Ed,D2,Ops,employee\nS3,Flo,D3,Hr,supervisor\n";

/// Parse the Prometheus text exposition strictly: every sample's metric has its HELP and
/// TYPE (gauge or counter) before it, once; names and label names are valid; label values are
/// quoted; values are numbers (or NaN); no series twice. Returns series -> value.
fn parse(text: &str) -> BTreeMap<String, f64> {
    let name_ok = |n: &str| {
        let mut c = n.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_' || f == ':')
            && c.all(|x| x.is_ascii_alphanumeric() || x == '_' || x == ':')
    };
    let (mut help, mut typed) = (BTreeSet::new(), BTreeMap::new());
    let mut series = BTreeMap::new();
    assert!(text.ends_with('\n'), "the exposition ends with a newline");
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, doc) = rest.split_once(' ').unwrap();
            assert!(name_ok(name) && !doc.is_empty(), "{line}");
            assert!(help.insert(name.to_string()), "HELP twice: {line}");
            assert!(!typed.contains_key(name), "HELP after TYPE: {line}");
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            assert!(["gauge", "counter"].contains(&kind), "{line}");
            assert!(kind != "counter" || name.ends_with("_total"), "{line}");
            assert!(help.contains(name), "TYPE before HELP: {line}");
            assert!(
                typed.insert(name.to_string(), kind.to_string()).is_none(),
                "TYPE twice: {line}"
            );
        } else {
            assert!(!line.starts_with('#') && !line.is_empty(), "{line:?}");
            let (key, value) = line.rsplit_once(' ').unwrap();
            let name = key.split('{').next().unwrap();
            assert!(
                name_ok(name) && typed.contains_key(name),
                "sample before its TYPE: {line}"
            );
            if let Some(labels) = key.strip_prefix(name).filter(|l| !l.is_empty()) {
                let inner = labels.strip_prefix('{').and_then(|l| l.strip_suffix('}')).unwrap();
                for pair in inner.split("\",") {
                    let (k, v) = pair.split_once('=').unwrap();
                    assert!(name_ok(k) && !k.contains(':') && v.starts_with('"'), "{line}");
                }
                assert!(inner.ends_with('"'), "{line}");
            }
            let v: f64 = value.parse().unwrap_or_else(|_| panic!("not a number: {line}"));
            assert!(series.insert(key.to_string(), v).is_none(), "series twice: {line}");
        }
    }
    series
}

/// `promtool check metrics` on the text, where promtool is installed (Debian's `prometheus`).
pub(super) fn promtool(text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        eprintln!("promtool not installed: the strict parse above is the check");
        return;
    };
    use std::io::Write;
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success() && said.trim().is_empty(), "promtool: {said}\n{text}");
}

#[test]
fn metrics_show_the_days_checkins_held_punches_and_the_deepest_queues_from_the_real_stores() {
    let (zone, _) = common::midday_zone();
    let env = TestEnv::migrated(&zone);
    env.import_roster("roster.csv", ROSTER);
    env.ok(&["queues", "declare"]);
    let today = env.today().to_string();
    env.ok(&["init-day", "--date", &today]);
    // Two check-ins in D1, one in D2 and a check-out: each told to its supervisor's queue.
    for (emp, kind) in [("A1", "in"), ("A2", "in"), ("B1", "in"), ("A1", "out")] {
        env.ok(&["checkin", emp, "--kind", kind]);
    }
    // An hour back by a key that may not replay, under the default 15-minute window: held.
    env.policy("policy.replay_window_minutes", "15", "2000-01-01");
    let back = (Utc::now() - Duration::hours(1)).to_rfc3339();
    let o = env
        .cmd()
        .args(["checkin", "S2", "--kind", "in", "--at", &back])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(7), "{}", String::from_utf8_lossy(&o.stderr));

    let text = env.ok(&["metrics", "--top", "1"]);
    let m = parse(&text);
    promtool(&text);
    let get = |k: &str| *m.get(k).unwrap_or_else(|| panic!("no {k} in\n{text}"));
    let build = m.keys().find(|k| k.starts_with("attendance_build_info{")).expect(&text);
    assert!(
        build.contains(&format!("version=\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{build}"
    );
    assert_eq!(m[build], 1.0);
    for store in ["redis", "mysql", "rabbitmq"] {
        assert_eq!(get(&format!("attendance_store_up{{store=\"{store}\"}}")), 1.0, "{text}");
    }
    assert_eq!(get("attendance_checkins_recorded{kind=\"in\"}"), 3.0, "{text}");
    assert_eq!(get("attendance_checkins_recorded{kind=\"out\"}"), 1.0, "{text}");
    assert_eq!(get("attendance_employees_checked_in"), 3.0, "{text}");
    assert_eq!(get("attendance_checkins_held"), 1.0, "{text}");
    assert_eq!(get("attendance_checkins_held_today"), 1.0, "{text}");
    assert_eq!(get("attendance_events_pending"), 0.0, "{text}");
    assert_eq!(get("attendance_events_parked"), 0.0, "{text}");
    // The queues as the broker has them: D1 3 events, D2 1, D3 none; --top 1 names D1 alone.
    assert_eq!(common::queue_depth(&format!("{}.dept.D1", env.ns)), 3);
    assert_eq!(get("attendance_queue_messages"), 4.0, "{text}");
    assert_eq!(get("attendance_queue_depth{department=\"D1\"}"), 3.0, "{text}");
    assert_eq!(get("attendance_queue_depth{department=\"_other\"}"), 1.0, "{text}");
    assert_eq!(
        m.keys().filter(|k| k.starts_with("attendance_queue_depth{")).count(),
        2,
        "{text}"
    );

    // -o FILE: the same figures, written whole.
    let path = env.dir.join("attendance.prom");
    env.ok(&["metrics", "-o", path.to_str().unwrap()]);
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(parse(&written).get("attendance_checkins_held"), Some(&1.0), "{written}");

    // A broker that does not answer: said as such, the other stores' figures still there.
    let o = env
        .cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(["metrics"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = parse(&text);
    promtool(&text);
    assert_eq!(m["attendance_store_up{store=\"rabbitmq\"}"], 0.0, "{text}");
    assert_eq!(m["attendance_checkins_recorded{kind=\"in\"}"], 3.0, "{text}");
    assert!(!m.keys().any(|k| k.starts_with("attendance_queue_depth")), "{text}");
}

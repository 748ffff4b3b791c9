//! `report timesheet` where the features meet: a night shift across midnight punched from a
//! kiosk signing with its registered Ed25519 key (its check-in sent twice), and a day a
//! supervisor corrected: each punch shows once, with how it came, under the day it belongs to.

use crate::common;

use common::TestEnv;
use serde_json::{json, Value};

const TZ: &str = "Europe/Paris";

/// The punches of a timesheet row as `(kind, at, how)`.
fn punches(row: &Value) -> Vec<Value> {
    row["punches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| json!([p["kind"], p["at"], p["how"]]))
        .collect()
}

#[test]
fn a_timesheet_shows_each_punch_once_with_how_it_came_signed_nights_and_corrections_included() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let (night, sup) = env.member_and_supervisor();
    let day = env
        .members("D001")
        .into_iter()
        .find(|e| *e != night && *e != sup)
        .unwrap();
    env.assign_night_shift_to("employee", &night, "2026-11-02");

    // The night of Thursday 19 November from a signed kiosk, its check-in sent twice.
    let key = env.registered_key("kiosk-1", true);
    for (kind, at) in [
        ("in", "2026-11-19T22:05:00+01:00"),
        ("in", "2026-11-19T22:05:00+01:00"),
        ("out", "2026-11-20T06:00:00+01:00"),
    ] {
        let args = ["checkin", night.as_str(), "--kind", kind, "--at", at, "-q"];
        common::expect_ok(&args, env.as_kiosk(&key, &args));
    }
    // A day without its check-out, which the supervisor sets.
    env.punch(&day, "in", "2026-11-20T09:00:00", true);
    env.ok(&["settle", "--date", "2026-11-19", "-q"]);
    env.ok(&["settle", "--date", "2026-11-20", "-q"]);
    env.correct_out(&day, "2026-11-20", &sup);

    let sheet = env.json(&[
        "report",
        "timesheet",
        "--employee",
        &night,
        "--month",
        "2026-11",
        "--json",
    ]);
    let r = &sheet["rows"][18];
    assert_eq!(r["work_date"], "2026-11-19");
    assert_eq!(r["shift"], "night");
    assert_eq!(
        punches(r),
        [
            json!(["in", "2026-11-19T22:05:00+01:00", "live"]),
            json!(["out", "2026-11-20T06:00:00+01:00", "live"]),
        ],
        "once each, under the night's date: {r}"
    );
    // 22:05 to 06:00 is 475 minutes, less the 30 of the break centred on 02:00.
    assert_eq!(
        (r["worked_minutes"].clone(), r["break_minutes"].clone()),
        (json!(445), json!(30))
    );
    assert_eq!(r["status"], "present", "5 minutes late is within the grace: {r}");
    assert_eq!(sheet["rows"][19]["status"], "absent", "no night on the 20th");
    assert_eq!(sheet["totals"]["counts"], json!({"present": 1, "absent": 1}));

    let sheet = env.json(&[
        "report",
        "timesheet",
        "--employee",
        &day,
        "--month",
        "2026-11",
        "--json",
    ]);
    let r = &sheet["rows"][19];
    assert_eq!(
        punches(r),
        [
            json!(["in", "2026-11-20T09:00:00+01:00", "live"]),
            json!(["out", "2026-11-20T18:15:00+01:00", "corrected"]),
        ],
        "{r}"
    );
    // 09:00 to 18:15 less the policy's hour of break.
    assert_eq!(r["worked_minutes"], 495, "{r}");
    assert_eq!(sheet["totals"]["worked_minutes"], 495);
}

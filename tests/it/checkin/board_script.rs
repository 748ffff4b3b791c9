//! The punch script on the real Redis agrees with its reference model, punch by punch.

use crate::common;
use attendance::DayRecord;
use attendance::Keys;
use attendance::Kind;
use attendance::Policy;
use attendance::{Employee, Punch, PunchRules};
use chrono::{DateTime, NaiveDate, Utc};
use proptest::prelude::*;
use redis::Commands;

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn script_matches_model(punches in prop::collection::vec((0i64..86_400, prop::option::of(prop::bool::ANY)), 1..40)) {
        let env = common::TestEnv::new("UTC");
        let keys = Keys::new(&env.ns);
        let mut board = env.board_handle();
        let mut con = env.redis();
        let policy = Policy::default();
        let rules = PunchRules::new(&policy, chrono_tz::UTC);
        let day = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        let start: DateTime<Utc> = day.and_hms_opt(0, 0, 0).unwrap().and_utc();
        let emp = Employee { id: "E1".into(), department_id: "D1".into(), name: "Ann".into(), employment: Default::default() };
        let mut model = DayRecord::default();
        for (secs, kind) in punches {
            let kind = kind.map(|b| if b { Kind::In } else { Kind::Out });
            let p = Punch::new(emp.clone(), kind, start + chrono::Duration::seconds(secs), "test", &policy, chrono_tz::UTC);
            let got = board.punch(rules, &p).unwrap();
            let (k, changed, dup) = model.apply(secs, kind, rules.split_secs(day));
            prop_assert_eq!((got.kind, got.changed, got.duplicate), (k, changed, dup));
            prop_assert_eq!((got.first_in, got.last_out), (model.first_in(), model.last_out()));
            let stored: String = con.hget(keys.board("D1", day), "E1").unwrap();
            prop_assert_eq!(DayRecord::parse(&stored), model.clone());
        }
    }
}

/// The day most of these tests punch on: 2026-11-02 in Paris, under the default policy.
struct ParisDay {
    policy: Policy,
    tz: chrono_tz::Tz,
    rules: PunchRules,
    day: NaiveDate,
    start: DateTime<Utc>,
}

impl ParisDay {
    fn new() -> ParisDay {
        let (policy, tz) = (Policy::default(), chrono_tz::Europe::Paris);
        let day = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        ParisDay {
            rules: PunchRules::new(&policy, tz),
            start: attendance::day_start(tz, day),
            policy,
            tz,
            day,
        }
    }

    /// A punch `secs` into the day; `kind` true for in, false for out, `None` unlabelled.
    /// Not the common `TestEnv::punch`: this builds the library's `Punch` value for the script
    /// and its model, never running the binary.
    fn punch(&self, emp: Employee, kind: Option<bool>, secs: i64, source: &str) -> Punch {
        let kind = kind.map(|b| if b { Kind::In } else { Kind::Out });
        Punch::new(
            emp,
            kind,
            self.start + chrono::Duration::seconds(secs),
            source,
            &self.policy,
            self.tz,
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]
    /// Bulk (many punches per call, grouped by department) gives the same boards and outcomes
    /// as one call per punch, and every outbox entry is a valid `Event`.
    #[test]
    fn punch_many_matches_one_by_one(punches in prop::collection::vec((0usize..6, 20_000i64..70_000, prop::option::of(prop::bool::ANY)), 1..300)) {
        let env = common::TestEnv::new("Europe/Paris");
        let paris = ParisDay::new();
        let (rules, day) = (paris.rules, paris.day);
        let make = |&(e, secs, kind): &(usize, i64, Option<bool>)| {
            let emp = Employee { id: format!("E{e}"), department_id: format!("D{}", e % 3), name: format!("N{e}"), employment: Default::default() };
            paris.punch(emp, kind, secs, "test")
        };
        let list: Vec<Punch> = punches.iter().map(make).collect();
        // Both under the test namespace, so TestEnv removes them even if the test fails.
        let (mut one, mut many) = (env.board_in(&format!("{}:a", env.ns)), env.board_in(&format!("{}:b", env.ns)));
        let mut con = env.redis();
        let singles: Vec<_> = list.iter().map(|p| one.punch(rules, p).unwrap()).collect();
        let bulk = many.punch_many(rules, &list, |_| {}).unwrap();
        for (s, b) in singles.iter().zip(&bulk) {
            prop_assert_eq!((s.kind, s.changed, s.duplicate, s.first_in, s.last_out), (b.kind, b.changed, b.duplicate, b.first_in, b.last_out));
        }
        for d in 0..3 {
            let dept = format!("D{d}");
            let a: std::collections::HashMap<String, String> = con.hgetall(one.keys().board(&dept, day)).unwrap();
            let b: std::collections::HashMap<String, String> = con.hgetall(many.keys().board(&dept, day)).unwrap();
            prop_assert_eq!(a, b);
            let events: std::collections::HashMap<String, String> = con.hgetall(many.keys().outbox(&dept)).unwrap();
            for (id, stored) in events {
                let out = attendance::render(&id, &stored).unwrap();
                let e: attendance::Event = serde_json::from_str(&out.json).unwrap();
                prop_assert_eq!(e.event_id, id);
                prop_assert_eq!(e.late, e.late_minutes > 0);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]
    /// The compact outbox record round trip: each punch's record, written by the real script and
    /// rendered by `attendance::render`, is the event the punch and the model say, field by field.
    #[test]
    fn each_outbox_record_renders_to_the_event_of_its_punch(punches in prop::collection::vec((0usize..4, 20_000i64..70_000, prop::option::of(prop::bool::ANY)), 1..120)) {
        let env = common::TestEnv::new("Europe/Paris");
        let keys = Keys::new(&env.ns);
        let mut board = env.board_handle();
        let policy = Policy::default();
        let tz = chrono_tz::Europe::Paris;
        let rules = PunchRules::new(&policy, tz);
        let day = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        let start = attendance::day_start(tz, day);
        let list: Vec<Punch> = punches
            .iter()
            .map(|&(e, secs, kind)| {
                let emp = Employee { id: format!("E{e}"), department_id: "D1".into(), name: format!("N\"{e}\"\t"), employment: Default::default() };
                let kind = kind.map(|b| if b { Kind::In } else { Kind::Out });
                Punch::new(emp, kind, start + chrono::Duration::seconds(secs), "kiosk\t\"1\"", &policy, tz)
            })
            .collect();
        let mut con = env.redis();
        let outcomes = board.punch_many(rules, &list, |_| {}).unwrap();
        let outbox: std::collections::HashMap<String, String> = con.hgetall(keys.outbox("D1")).unwrap();
        let mut models: std::collections::HashMap<&str, DayRecord> = Default::default();
        for (p, o) in list.iter().zip(&outcomes) {
            let (kind, changed, dup) = models.entry(&p.employee.id).or_default().apply(p.facts.secs, p.kind, rules.split_secs(day));
            prop_assert_eq!((o.kind, o.changed, o.duplicate), (kind, changed, dup));
            // An exact repeat adds no event; its id is its first copy's (a punch's id derives
            // from the punch), whose event the outbox holds and the first copy checks.
            if dup {
                continue;
            }
            let stored = outbox.get(&p.event_id);
            prop_assert!(stored.is_some(), "an event for each punch that is no exact repeat");
            let Some(stored) = stored else { continue };
            let out = attendance::render(&p.event_id, stored).unwrap();
            prop_assert_eq!(out.routing_key(), format!("D1.{kind}"));
            let e: attendance::Event = serde_json::from_str(&out.json).unwrap();
            let late = if kind == Kind::In { p.facts.late_minutes_if_in } else { 0 };
            let early = if kind == Kind::Out { p.facts.early_minutes_if_out } else { 0 };
            prop_assert_eq!(e, attendance::Event {
                event_id: p.event_id.clone(),
                employee_id: p.employee.id.clone(),
                employee_name: p.employee.name.clone(),
                department_id: "D1".into(),
                kind,
                at: p.at.with_timezone(&tz).to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
                work_date: day,
                late: late > 0,
                early: early > 0,
                late_minutes: late,
                early_minutes: early,
                changed,
                source: "kiosk\t\"1\"".into(),
                recorded_at: Some(p.recorded_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
                // A board opened with no `signing.key_file` writes unsigned records.
                key_id: None,
                sig: None,
            });
        }
    }
}

/// A morning of `depts` departments with `per_dept` check-ins each, 08:00 onwards (Europe/Paris).
fn morning(depts: usize, per_dept: usize) -> (PunchRules, NaiveDate, Vec<Punch>) {
    let policy = Policy::default();
    let tz = chrono_tz::Europe::Paris;
    let day = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
    let start = attendance::day_start(tz, day) + chrono::Duration::hours(8);
    let list = (0..depts * per_dept)
        .map(|i| {
            let emp = Employee {
                id: format!("E{i}"),
                department_id: format!("D{}", i % depts),
                name: format!("N{i}"),
                employment: Default::default(),
            };
            Punch::new(
                emp,
                None,
                start + chrono::Duration::seconds(i as i64 % 3_000),
                "test",
                &policy,
                tz,
            )
        })
        .collect();
    (PunchRules::new(&policy, tz), day, list)
}

/// Bulk over many pipelines (each sent before the previous one's replies are read) gives the
/// same boards and outcomes as one call per punch, in input order.
#[test]
fn punch_many_over_many_pipelines_matches_one_by_one() {
    let env = common::TestEnv::new("Europe/Paris");
    // 150 departments of 30: 150 script calls, 5 pipelines.
    let (rules, day, list) = morning(150, 30);
    let (mut one, mut many) = (
        env.board_in(&format!("{}:a", env.ns)),
        env.board_in(&format!("{}:b", env.ns)),
    );
    let mut con = env.redis();
    let singles: Vec<_> = list.iter().map(|p| one.punch(rules, p).unwrap()).collect();
    let bulk = many.punch_many(rules, &list, |_| {}).unwrap();
    assert_eq!(bulk.len(), list.len());
    for (s, b) in singles.iter().zip(&bulk) {
        assert_eq!(
            (s.kind, s.changed, s.duplicate, s.first_in, s.last_out),
            (b.kind, b.changed, b.duplicate, b.first_in, b.last_out)
        );
    }
    for d in 0..150 {
        let a: std::collections::HashMap<String, String> =
            con.hgetall(one.keys().board(&format!("D{d}"), day)).unwrap();
        let b: std::collections::HashMap<String, String> =
            con.hgetall(many.keys().board(&format!("D{d}"), day)).unwrap();
        assert_eq!((a.len(), &a), (30, &b), "D{d}");
    }
}

/// A script call that fails part-way through a stream of pipelines: the failure is returned,
/// every punch reported recorded is on its board, and the connection is still in step (the
/// replies owed by the pipeline in flight were read), so its next command gets its own reply.
#[test]
fn a_failing_call_amid_overlapped_pipelines_leaves_the_connection_in_step() {
    let env = common::TestEnv::new("Europe/Paris");
    let (rules, day, list) = morning(150, 30);
    let keys = Keys::new(&env.ns);
    let mut board = env.board_handle();
    let mut con = env.redis();
    // One board in ten is a string: those script calls fail (WRONGTYPE). With 15 of them
    // spread over 5 pipelines, the first failure comes while a later pipeline is in flight.
    for d in (0..150).step_by(10) {
        let _: () = con.set(keys.board(&format!("D{d}"), day), "not a hash").unwrap();
    }
    let (outcomes, done) = board.punch_many_streamed(rules, &list, |_, _| {});
    let e = format!("{:#}", done.unwrap_err());
    assert!(e.contains("WRONGTYPE"), "{e}");
    let recorded = outcomes.iter().filter(|o| o.is_some()).count();
    assert!(
        recorded < list.len(),
        "the failed call's punches are not reported recorded"
    );
    for (p, o) in list.iter().zip(&outcomes) {
        if o.is_some() {
            let v: Option<String> = con
                .hget(keys.board(&p.employee.department_id, day), &p.employee.id)
                .unwrap();
            assert!(v.is_some(), "{} reported recorded but not on its board", p.employee.id);
        }
    }
    let pong: String = redis::cmd("PING").query(board.redis()).unwrap();
    assert_eq!(pong, "PONG");
    let echoed: String = redis::cmd("ECHO").arg("in step").query(board.redis()).unwrap();
    assert_eq!(echoed, "in step");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20, ..ProptestConfig::default() })]
    /// A day's punches (labelled and not, small hours to late evening, repeats, past
    /// the tokens a board keeps) sent by the real script in any order give the same board
    /// (the same punches kept, so the same first check-in, last check-out and settled history)
    /// and the same event for each punch: the same kind, late and early minutes.
    #[test]
    fn every_arrival_order_gives_the_same_board_and_events(
        (punches, shuffled) in prop::collection::vec((0i64..86_400, prop::option::of(prop::bool::ANY)), 1..40)
            .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
    ) {
        let env = common::TestEnv::new("Europe/Paris");
        let paris = ParisDay::new();
        let (rules, day) = (paris.rules, paris.day);
        let emp = Employee { id: "E1".into(), department_id: "D1".into(), name: "Ann".into(), employment: Default::default() };
        let make = |v: &[(i64, Option<bool>)]| -> Vec<Punch> {
            v.iter().map(|&(secs, kind)| paris.punch(emp.clone(), kind, secs, "test")).collect()
        };
        let (list, shuffled) = (make(&punches), make(&shuffled));
        let mut con = env.redis();
        let mut seen = Vec::new();
        for (tag, list) in [("a", &list), ("b", &shuffled)] {
            let mut board = env.board_in(&format!("{}:{tag}", env.ns));
            // One by one, as separate check-ins arrive.
            for p in list.iter() {
                board.punch(rules, p).unwrap();
            }
            let stored: String = con.hget(board.keys().board("D1", day), "E1").unwrap();
            let rec = DayRecord::parse(&stored);
            let mut kept: Vec<(i64, &str)> = rec.punches.iter().map(|&(k, s)| (s, k.as_str())).collect();
            kept.sort();
            let outbox: std::collections::HashMap<String, String> = con.hgetall(board.keys().outbox("D1")).unwrap();
            let mut events: Vec<(String, Kind, u32, u32)> = list
                .iter()
                .filter_map(|p| outbox.get(&p.event_id))
                .map(|r| {
                    let id = "x";
                    let e: attendance::Event = serde_json::from_str(&attendance::render(id, r).unwrap().json).unwrap();
                    (e.at, e.kind, e.late_minutes, e.early_minutes)
                })
                .collect();
            events.sort_by(|a, b| (&a.0, a.1.as_str(), a.2, a.3).cmp(&(&b.0, b.1.as_str(), b.2, b.3)));
            events.dedup();
            seen.push((rec.first_in(), rec.last_out(), kept, events));
        }
        prop_assert_eq!(&seen[0], &seen[1]);
    }
}

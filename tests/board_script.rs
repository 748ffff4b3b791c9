//! The punch script on the real Redis agrees with its reference model, punch by punch.

mod common;
use attendance::board::record::DayRecord;
use attendance::board::{self, Employee, Punch, PunchRules};
use attendance::config::Policy;
use attendance::event::Kind;
use attendance::keys::Keys;
use chrono::{DateTime, NaiveDate, Utc};
use proptest::prelude::*;
use redis::Commands;

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn script_matches_model(punches in prop::collection::vec((0i64..86_400, prop::option::of(prop::bool::ANY)), 1..40)) {
        let env = common::TestEnv::new("UTC");
        let keys = Keys::new(&env.ns);
        let mut con = env.redis();
        let policy = Policy::default();
        let rules = PunchRules::new(&policy, chrono_tz::UTC);
        let day = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        let start: DateTime<Utc> = day.and_hms_opt(0, 0, 0).unwrap().and_utc();
        let emp = Employee { id: "E1".into(), department_id: "D1".into(), name: "Ann".into() };
        let mut model = DayRecord::default();
        for (secs, kind) in punches {
            let kind = kind.map(|b| if b { Kind::In } else { Kind::Out });
            let p = Punch::new(emp.clone(), kind, start + chrono::Duration::seconds(secs), "test", &policy, chrono_tz::UTC);
            let got = board::punch(&mut con, &keys, rules, &p).unwrap();
            let (k, changed, dup) = model.apply(secs, kind, rules.repeat_window_secs);
            prop_assert_eq!((got.kind, got.changed, got.duplicate), (k, changed, dup));
            prop_assert_eq!((got.first_in, got.last_out), (model.first_in(), model.last_out()));
            let stored: String = con.hget(keys.board("D1", day), "E1").unwrap();
            prop_assert_eq!(DayRecord::parse(&stored), model.clone());
        }
    }
}

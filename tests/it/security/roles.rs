//! The trust model, role by role (docs/security.md, "The trust model, role by role"): each
//! role's accounts are made on the shared Redis, RabbitMQ and MySQL with the grants the page
//! gives, and a day is run by the roles, each with its own config file (URLs naming its users,
//! passwords in files). Each role's commands work; a command outside the role is refused and
//! changes nothing.

use crate::common;

use chrono::{Duration, Utc};
use common::relay::{wait_for, Relay};
use common::roles::{Grants, Role};
use common::{TestEnv, KEY_ID};
use mysql::prelude::Queryable;
use serde_json::Value;

/// A kiosk: `checkin` (one punch or a file) and `status`. It reads the roster cache but may not
/// write it; its RabbitMQ account may publish through the default exchange only, and declares
/// nothing (`amqp.declare = false`); MySQL: looking up employees the cache lacks, and settled days.
fn kiosk() -> Grants<'static> {
    Grants {
        redis: Some(
            "%R~{ns}:roster:* %R~{ns}:{shifts} %R~{ns}:{keys} ~{ns}:board:* ~{ns}:days:* ~{ns}:outbox:* ~{ns}:punchlog:* %R~{ns}:settle:* ~{ns}:settled:* ~{ns}:relay:* \
             -@all +evalsha +eval +script|load +hmget +hget +hset +hdel +hscan +hlen \
             +exists +time +sadd +rpush +ltrim +object|encoding +ping +hello +auth +client|setname +select",
        ),
        rabbit: Some(["", "^amq\\.default$", ""]),
        mysql: &[
            "SELECT ON {db}.employees",
            "SELECT ON {db}.attendance",
            "SELECT ON {db}.shifts",
            "SELECT ON {db}.shift_assignments",
            "SELECT ON {db}.policy_versions",
            "SELECT, INSERT ON {db}.held_punches",
        ],
        config: "[amqp]\ndeclare = false",
    }
}

/// The relay with absence alerts off (the test env turns them off): the outboxes and its own
/// hand-off keys, and the rules' copy (whether the day's alerts are on is the rulebook's word);
/// publishes only; no MySQL at all (its alerts would read the roster, leave and calendar:
/// `doctor_checks_each_roles_mysql_grants` checks that account).
fn relay() -> Grants<'static> {
    Grants {
        redis: Some(
            "~{ns}:outbox:* ~{ns}:relay:* %R~{ns}:{shifts} -@all +scan +hscan +hdel +hlen +del +lpop +blpop +set +get +hmget +evalsha \
             +eval +script|load +ping +hello +auth +client|setname +select",
        ),
        rabbit: Some(["", "^amq\\.default$", ""]),
        mysql: &[],
        config: "[amqp]\ndeclare = false",
    }
}

/// D001's supervisor: `watch-dept D001` (its queue only, parking what it refuses) and `correct`.
fn supervisor() -> Grants<'static> {
    Grants {
        redis: Some(
            "%R~{ns}:roster:* %R~{ns}:{shifts} %R~{ns}:{keys} %R~{ns}:departures:* ~{ns}:board:{D001}:* ~{ns}:days:{D001} \
             ~{ns}:outbox:{D001} ~{ns}:punchlog:{D001}:* ~{ns}:settled:{D001}:* ~{ns}:relay:* ~{ns}:shown:{D001} \
             ~{ns}:refused:{signing} -@all +hmget +hgetall +sismember +sadd +expire +hincrby \
             +evalsha +eval +script|load +hget +hset +hdel +exists +time +rpush +ltrim +object|encoding +hscan +hlen +smembers \
             +ping +hello +auth +client|setname +select",
        ),
        rabbit: Some(["", "^amq\\.default$", "^{ns}\\.dept\\.D001$"]),
        mysql: &[
            "SELECT ON {db}.employees",
            "SELECT ON {db}.supervisors",
            "SELECT ON {db}.attendance",
            "SELECT ON {db}.calendar_days",
            "SELECT, INSERT ON {db}.leaves",
            "SELECT ON {db}.shifts",
            "SELECT ON {db}.shift_assignments",
            "SELECT ON {db}.pay_periods",
            "SELECT ON {db}.policy_versions",
            "SELECT, INSERT ON {db}.corrections",
            "SELECT, UPDATE ON {db}.held_punches",
            "SELECT, INSERT ON {db}.punch_voids",
            "SELECT, INSERT ON {db}.overtime_decisions",
            "UPDATE ON {db}.attendance",
            "INSERT ON {db}.punch_log",
        ],
        config: "[amqp]\ndeclare = false",
    }
}

/// HR: reports, leave, the calendar and corrections, in MySQL only.
fn hr() -> Grants<'static> {
    Grants {
        redis: None,
        rabbit: None,
        mysql: &[
            "SELECT ON {db}.*",
            "INSERT, DELETE ON {db}.leaves",
            "INSERT, UPDATE, DELETE ON {db}.calendar_days",
            "UPDATE ON {db}.attendance",
            "INSERT ON {db}.corrections",
            "INSERT ON {db}.punch_log",
            "INSERT, UPDATE ON {db}.pay_periods",
            "INSERT ON {db}.pay_period_audit",
            "INSERT ON {db}.overtime_decisions",
        ],
        config: "",
    }
}

/// The owner: migrations, the roster, the topology, init-day, settle, recover, the parking queue.
fn owner() -> Grants<'static> {
    Grants {
        redis: Some("~{ns}:* +@all -@dangerous +config|get +info"),
        rabbit: Some(["^{ns}\\.", "^(amq\\.default|{ns}\\..*)$", "^{ns}\\."]),
        mysql: &["ALL ON {db}.*"],
        config: "",
    }
}

/// What the refused commands must leave as it was: every key of the namespace and every row.
fn stores(env: &TestEnv) -> (Vec<(String, String)>, Vec<String>, u64, u64) {
    (
        env.redis_snapshot(),
        env.attendance_rows(),
        env.count("corrections"),
        env.count("leaves"),
    )
}

#[test]
fn a_day_run_by_each_role_with_its_own_accounts() {
    let env = TestEnv::new("UTC");
    let owner = Role::create(&env, "owner", &owner());
    let day = (Utc::now() - Duration::days(1)).date_naive().to_string();
    let at = |hhmm: &str| format!("{day}T{hhmm}:00Z");

    // The owner sets everything up, from an empty database; the other roles' grants name its
    // tables.
    owner_migrates(&env, &owner);
    let (kiosk, relay, sup, hr) = (
        Role::create(&env, "kiosk", &kiosk()),
        Role::create(&env, "relay", &relay()),
        Role::create(&env, "sup", &supervisor()),
        Role::create(&env, "hr", &hr()),
    );
    let roster = env.dir.join("roster.csv");
    let roster = roster.to_str().unwrap();
    owner.ok(
        &env,
        &[
            "org",
            "generate",
            "--employees",
            "6",
            "--departments",
            "2",
            "-o",
            roster,
            "-q",
        ],
    );
    owner.ok(&env, &["org", "import", roster, "-q"]);
    owner.ok(&env, &["queues", "declare", "-q"]);
    owner.ok(&env, &["init-day", "--date", &day, "-q"]);
    let d001 = env.members("D001");
    let (boss, e1, e2) = (&d001[0], &d001[1], &d001[2]);

    // The kiosk records punches (one from a file, the last while the broker is down) and reads a
    // day.
    let c: Value = serde_json::from_str(&kiosk.ok(&env, &["checkin", e1, "--at", &at("08:00"), "--json"])).unwrap();
    assert_eq!(c["notification"], "sent", "{c}");
    let file = env.file(
        "punches.csv",
        &format!("employee_id,kind,at\n{boss},in,{}\n", at("07:55")),
    );
    kiosk.ok(&env, &["checkin", "--file", file.to_str().unwrap(), "-q"]);
    let down = format!("amqp://{}@127.0.0.1:1/%2f", kiosk.user);
    let c: Value = serde_json::from_str(&kiosk.ok(
        &env,
        &["checkin", e2, "--at", &at("08:10"), "--json", "--amqp-url", &down],
    ))
    .unwrap();
    assert_eq!(c["notification"], "pending", "{c}");
    let s: Value = serde_json::from_str(&kiosk.ok(&env, &["status", e1, "--date", &day, "--json"])).unwrap();
    assert!(s["first_in"].is_string(), "{s}");
    assert_eq!(env.board("D001", &day).len(), 3, "the punches are on the board");
    // ... and nothing else: no settle, no report, no other namespace, no roster cache write.
    let before = stores(&env);
    let err = kiosk.fails(&env, &["settle", "--date", &day, "-q"], 1);
    assert!(err.contains("denied"), "{err}");
    let err = kiosk.fails(&env, &["report", "day", "--date", &day], 1);
    assert!(err.contains("denied"), "{err}");
    let o = kiosk
        .cmd(&env)
        .args(["checkin", e1])
        .env("ATTENDANCE_NAMESPACE", "elsewhere")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("ACL denies it"), "a refusal by the account's ACL: {err}");
    let part = env.keys().roster_part(0);
    let mut kiosk_redis = redis::Client::open(format!("redis://{}:{}@127.0.0.1:6379/", kiosk.user, kiosk.password()))
        .unwrap()
        .get_connection()
        .unwrap();
    let moved: redis::RedisResult<()> = redis::cmd("HSET")
        .arg(&part)
        .arg(e1)
        .arg("D002\tX")
        .query(&mut kiosk_redis);
    assert!(
        moved.unwrap_err().to_string().contains("no permissions"),
        "a kiosk cannot move anyone"
    );
    assert_eq!(stores(&env), before, "the refused commands changed nothing");

    // The relay sends what waits; it records nothing, and without alerts needs no MySQL account.
    let r: Value = serde_json::from_str(&relay.ok(&env, &["relay", "--json"])).unwrap();
    assert_eq!(r["sent"], 1, "{r}");
    assert_eq!(env.outbox_events(), 0);
    let before = stores(&env);
    relay.fails(&env, &["checkin", e1, "-q"], 1);
    relay.fails(&env, &["leave", "add", e1, &day, &day], 3);
    assert_eq!(stores(&env), before);
    // Following, it takes the kiosk's hand-offs (the kiosk wakes it through Redis).
    let following = Relay::spawn(&env, relay.cmd(&env));
    let d002 = env.members("D002");
    let c: Value =
        serde_json::from_str(&kiosk.ok(&env, &["checkin", &d002[1], "--at", &at("08:20"), "--json"])).unwrap();
    assert_eq!(c["notification"], "handed_off", "{c}");
    let queue = format!("{}.dept.D002", env.ns);
    wait_for("the handed-off event in D002's queue", || {
        common::queue_depth(&queue) == 1
    });
    following.signal(libc::SIGTERM);
    let mut following = following;
    assert!(following.0.wait().unwrap().success());

    // The supervisor watches D001 (signed events checked against the roster: a message someone
    // with broker credentials published is parked), not D002, and may not import a roster.
    let ring = env.keyring(&[(KEY_ID, &env.key_secret, false)], &[]);
    let forged = serde_json::json!({
        "event_id": "forged-1", "employee_id": e1, "employee_name": "X", "department_id": "D001",
        "kind": "in", "at": at("07:00"), "work_date": day, "late": false, "early": false,
        "late_minutes": 0, "early_minutes": 0, "changed": true, "source": "kiosk-1", "recorded_at": at("07:00"),
    });
    common::publish_to_queue(&format!("{}.dept.D001", env.ns), &forged.to_string(), "forged-1");
    let watch = sup
        .cmd(&env)
        .env("ATTENDANCE_SIGNING_KEYRING_FILE", &ring)
        .args(["watch-dept", "D001", "--once", "--json"])
        .output()
        .unwrap();
    let shown = common::expect_ok(&["watch-dept"], watch);
    let mut who = common::employee_ids(&shown);
    who.sort();
    assert_eq!(who, d001, "every punch of D001, once");
    let parked = owner.ok(&env, &["dlq", "list", "--json"]);
    assert!(
        parked.contains("forged-1") && parked.contains("unsigned event"),
        "{parked}"
    );
    let before = stores(&env);
    let err = sup.fails(&env, &["watch-dept", "D002", "--once"], 3);
    assert!(err.contains("ACCESS_REFUSED"), "{err}");
    // Refused by the first store it asks (Redis's clock, then MySQL's grants): exit 1 either way.
    let err = sup.fails(&env, &["org", "import", roster, "-q"], 1);
    assert!(err.contains("refused") && err.contains("denie"), "{err}");
    assert_eq!(stores(&env), before);

    // The owner can rebuild the day from the journal, and settles it; the supervisor corrects
    // a member's day, HR a supervisor's.
    let r: Value =
        serde_json::from_str(&owner.ok(&env, &["recover", "--date", &day, "--idle-ms", "500", "--json"])).unwrap();
    assert_eq!(r["already_present"], 4, "every punch of the day: {r}");
    owner.ok(&env, &["settle", "--date", &day, "-q"]);
    assert_eq!(env.count("attendance"), 6);
    env.act_as(boss);
    sup.ok(
        &env,
        &[
            "correct",
            e2,
            "--date",
            &day,
            "--out",
            "18:15",
            "--reason",
            "kiosk down",
            "-q",
        ],
    );
    let hr_employee: String = env
        .mysql()
        .query_first("SELECT id FROM employees WHERE department_id = 'D002' ORDER BY id DESC LIMIT 1")
        .unwrap()
        .unwrap();
    env.mysql()
        .exec_drop(
            "UPDATE employees SET role = 'hr', updated_at = updated_at WHERE id = ?",
            (&hr_employee,),
        )
        .unwrap();
    env.act_as(&hr_employee);
    hr.ok(
        &env,
        &[
            "correct", boss, "--date", &day, "--out", "18:30", "--reason", "forgot", "-q",
        ],
    );
    assert_eq!(env.count("corrections"), 2);
    let report = hr.ok(&env, &["report", "day", "--date", &day, "--format", "csv"]);
    assert!(report.contains("D001"), "{report}");
    let punches = hr.ok(
        &env,
        &[
            "report",
            "punches",
            "--employee",
            e1,
            "--from",
            &day,
            "--to",
            &day,
            "--format",
            "csv",
        ],
    );
    assert!(punches.contains(KEY_ID), "{punches}");
    hr.ok(&env, &["leave", "add", e1, &day, &day, "-q"]);
    hr.ok(&env, &["calendar", "set", &day, "holiday", "-q"]);
    // HR has no account on Redis or RabbitMQ: it records no punch and settles nothing.
    let before = stores(&env);
    for args in [&["checkin", e1.as_str(), "-q"][..], &["settle", "--date", &day, "-q"]] {
        let err = hr.fails(&env, args, 3);
        assert!(err.contains("authentication failed"), "{err}");
    }
    assert_eq!(stores(&env), before);
}

/// `doctor`'s `mysql grants` check as the role's account: its status and detail.
fn grants_check(env: &TestEnv, role: &Role, args: &[&str]) -> (String, String) {
    // Other checks may fail for a narrow account (the kiosk cannot read the migrations):
    // only this one is looked at.
    let out = role.run(env, &[&["doctor", "--json"][..], args].concat());
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let c = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mysql grants")
        .unwrap_or_else(|| panic!("no mysql grants check: {report}"));
    (
        c["status"].as_str().unwrap().into(),
        c["detail"].as_str().unwrap().into(),
    )
}

/// The owner migrates the test's database, importing the suite's rulebook.
fn owner_migrates(env: &TestEnv, owner: &Role) {
    common::expect_ok(
        &["migrate"],
        owner
            .cmd(env)
            .envs(common::SUITE_POLICY)
            .args(["migrate", "-q"])
            .output()
            .unwrap(),
    );
}

#[test]
fn doctor_checks_each_roles_mysql_grants() {
    let env = TestEnv::new("UTC");
    let owner = Role::create(&env, "owner", &owner());
    owner_migrates(&env, &owner);
    let (kiosk, sup, hr) = (
        Role::create(&env, "kiosk", &kiosk()),
        Role::create(&env, "sup", &supervisor()),
        Role::create(&env, "hr", &hr()),
    );
    // The grants docs/security.md gives each role are what doctor expects of it.
    for (account, role) in [(&owner, "owner"), (&kiosk, "kiosk"), (&sup, "supervisor"), (&hr, "hr")] {
        let (status, detail) = grants_check(&env, account, &["--role", role]);
        assert_eq!(status, "ok", "{role}: {detail}");
        assert!(detail.contains(&format!("enough for role {role}")), "{detail}");
    }
    // Without --role, the roles the grants cover are named.
    let (status, detail) = grants_check(&env, &hr, &[]);
    assert_eq!(status, "ok", "{detail}");
    assert!(detail.contains("enough for roles relay, report, hr;"), "{detail}");
    let (_, detail) = grants_check(&env, &owner, &[]);
    assert!(detail.contains("enough for every role"), "{detail}");

    // A supervisor's account one grant short: a warning naming the role and the statement,
    // which, run by an administrator as printed, clears it.
    let mut short = supervisor();
    short.mysql = &short.mysql[..short.mysql.len() - 1];
    let sup2 = Role::create(&env, "sup2", &short);
    let (status, detail) = grants_check(&env, &sup2, &["--role", "supervisor"]);
    assert_eq!(status, "warn", "{detail}");
    assert!(detail.contains("role supervisor"), "{detail}");
    let grant = detail.split_once("run: ").unwrap().1;
    let wanted = format!("GRANT INSERT ON `{}`.`punch_log` TO '{}'@'", env.db, sup2.user);
    assert!(grant.starts_with(&wanted) && grant.ends_with("';"), "{grant}");
    // A kiosk's grants checked as HR's: every statement HR's role lacks.
    let (status, detail) = grants_check(&env, &kiosk, &["--role", "hr"]);
    assert_eq!(status, "warn", "{detail}");
    assert_eq!(detail.matches("GRANT ").count(), 9, "{detail}");
    env.mysql().query_drop(grant).unwrap();
    let (status, detail) = grants_check(&env, &sup2, &["--role", "supervisor"]);
    assert_eq!(status, "ok", "{detail}");

    // The relay's account reads what its absence alerts need, as docs/security.md grants it.
    let relay = Role::create(
        &env,
        "relay",
        &Grants {
            mysql: RELAY_ALERTS_MYSQL,
            ..Grants::default()
        },
    );
    let (status, detail) = grants_check(&env, &relay, &["--role", "relay"]);
    assert_eq!(status, "ok", "{detail}");
    let (status, detail) = grants_check(&env, &kiosk, &["--role", "relay"]);
    assert_eq!(status, "warn", "{detail}");
    assert_eq!(detail.matches("GRANT ").count(), 2, "{detail}");

    // A role that is none of them is a usage error.
    let err = sup2.fails(&env, &["doctor", "--role", "nobody"], 2);
    assert!(err.contains("invalid value 'nobody'"), "{err}");
}

/// S1 supervises D001 (A1, A2, A3): the department the supervisor's grants above name.
const REVIEW_ROSTER: &str = "employee_id,name,department_id,department_name,role\n\
    S1,Name S1,D001,Dept D001,supervisor\nA1,Name A1,D001,Dept D001,employee\n\
    A2,Name A2,D001,Dept D001,employee\nA3,Name A3,D001,Dept D001,employee\n";

/// The review's jobs with exactly the documented accounts: a kiosk signing with a registry key
/// that may not replay has its back-dated punches held (not refused by a grant); the
/// department's supervisor, holding no key material, approves one (board, signed event in the
/// queue, punch log), rejects another and voids a check-in, each decision audited under the
/// supervisor's own MySQL account. Regression: with the page's grants the kiosk's back-dated
/// punch failed with `INSERT denied ... held_punches` and the supervisor could neither approve
/// nor void.
#[test]
fn the_documented_accounts_hold_a_back_dated_punch_and_the_supervisor_approves_rejects_and_voids() {
    let env = TestEnv::new(&common::afternoon_zone());
    let owner = Role::create(&env, "owner", &owner());
    owner_migrates(&env, &owner);
    env.policy("policy.replay_window_minutes", "15", "2000-01-01");
    let (kiosk, sup) = (
        Role::create(&env, "kiosk", &kiosk()),
        Role::create(&env, "sup", &supervisor()),
    );
    env.import_roster("roster.csv", REVIEW_ROSTER);
    owner.ok(&env, &["queues", "declare", "-q"]);
    let day = env.today();
    owner.ok(&env, &["init-day", "--date", &day.to_string(), "-q"]);
    let key = env.registered_key("kiosk-7", false);
    let keyless = |role: &Role, args: &[&str]| {
        role.cmd(&env)
            .env_remove("ATTENDANCE_SIGNING_KEY_FILE")
            .env_remove("ATTENDANCE_SIGNING_KEYRING_FILE")
            .args(args)
            .output()
            .unwrap()
    };
    let as_kiosk = |args: &[&str]| {
        kiosk
            .cmd(&env)
            .env_remove("ATTENDANCE_SIGNING_KEYRING_FILE")
            .env("ATTENDANCE_SIGNING_KEY_FILE", &key)
            .args(args)
            .output()
            .unwrap()
    };
    let tz: chrono_tz::Tz = env.tz.parse().unwrap();
    let local = |hh: u32, mm: u32| {
        chrono::TimeZone::from_local_datetime(&tz, &day.and_hms_opt(hh, mm, 0).unwrap())
            .single()
            .unwrap()
            .to_rfc3339()
    };

    // The kiosk: a check-in now, then two back-dated punches, held (exit 7) with a review id.
    let now: Value = serde_json::from_str(&common::expect_ok(
        &["checkin"],
        as_kiosk(&["checkin", "A1", "--kind", "in", "--json"]),
    ))
    .unwrap();
    let held = |emp: &str, at: &str| {
        let o = as_kiosk(&["checkin", emp, "--kind", "in", "--at", at, "--json"]);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(7), "held, not refused: {err}");
        let v: Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
        v["review_id"].as_u64().unwrap().to_string()
    };
    let (a2, a3) = (held("A2", &local(7, 55)), held("A3", &local(7, 50)));
    assert_eq!(env.count("held_punches"), 2);
    // Who has a punch on D001's board (the layout gives everyone an empty field).
    let punched = || {
        let mut who: Vec<String> = env
            .board("D001", &day.to_string())
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(e, _)| e)
            .collect();
        who.sort();
        who
    };
    assert_eq!(punched(), ["A1"]);

    // The supervisor decides with its own accounts and no key: A2's punch applied, A3's not.
    env.act_as("S1");
    let queue = format!("{}.dept.D001", env.ns);
    let queued = common::queue_depth(&queue);
    let approved: Value = serde_json::from_str(&common::expect_ok(
        &["review", "approve"],
        keyless(&sup, &["review", "approve", &a2, "--reason", "kiosk offline", "--json"]),
    ))
    .unwrap();
    assert_eq!(approved["applied"]["notification"], "sent", "{approved}");
    common::expect_ok(
        &["review", "reject"],
        keyless(&sup, &["review", "reject", &a3, "--reason", "was not in", "-q"]),
    );
    assert_eq!(punched(), ["A1", "A2"]);
    wait_for("the approved punch's event in D001's queue", || {
        common::queue_depth(&queue) == queued + 1
    });
    let decided: Vec<(String, String, String)> = env
        .mysql()
        .query("SELECT employee_id, status, db_user FROM held_punches ORDER BY employee_id")
        .unwrap();
    let sup_user = |d: &(String, String, String)| d.2.starts_with(&format!("{}@", sup.user));
    assert_eq!(
        decided.iter().map(|d| (d.0.as_str(), d.1.as_str())).collect::<Vec<_>>(),
        [("A2", "approved"), ("A3", "rejected")],
        "{decided:?}"
    );
    assert!(
        decided.iter().all(sup_user),
        "audited under the supervisor's account: {decided:?}"
    );

    // ... and voids A1's check-in before settle: off the board, audited.
    let event = now["event_id"].as_str().unwrap();
    common::expect_ok(
        &["punch", "void"],
        keyless(
            &sup,
            &["punch", "void", "A1", "--event", event, "--reason", "wrong badge", "-q"],
        ),
    );
    assert_eq!(punched(), ["A2"]);
    assert_eq!(env.count("punch_voids"), 1);
}

/// The relay's MySQL grants for its absence alerts (docs/security.md): who is due that day.
const RELAY_ALERTS_MYSQL: &[&str] = &[
    "SELECT ON {db}.employees",
    "SELECT ON {db}.leaves",
    "SELECT ON {db}.calendar_days",
    "SELECT ON {db}.shifts",
    "SELECT ON {db}.shift_assignments",
    "SELECT ON {db}.policy_versions",
];

/// The relay with its absence alerts, exactly as docs/security.md grants it: the outboxes and
/// its own keys, the boards and the shift copy read-only, the alerts' marks; publishing only; a
/// MySQL account that reads who is due (roster, leave, calendar, shifts, the rulebook).
fn relay_with_alerts() -> Grants<'static> {
    Grants {
        redis: Some(
            "~{ns}:outbox:* ~{ns}:relay:* %R~{ns}:board:* %R~{ns}:{shifts} ~{ns}:alert:* -@all +scan +hscan +hdel +hlen \
             +del +lpop +blpop +set +get +evalsha +eval +script|load +time +hmget +hgetall +ping +hello +auth \
             +client|setname +select",
        ),
        rabbit: Some(["", "^amq\\.default$", ""]),
        mysql: RELAY_ALERTS_MYSQL,
        config: "[amqp]\ndeclare = false",
    }
}

/// The relay sends the absence alert with exactly its documented accounts: at the alert time,
/// D001's queue gets one alert naming who is missing, signed, which the supervisor's
/// `watch-dept` shows. Regression guard for the documented grants (the relay's accounts were
/// checked only by `doctor`'s reading of its MySQL grants).
#[test]
fn the_relays_documented_accounts_send_the_absence_alert() {
    let (zone, offset) = common::midday_zone();
    let env = TestEnv::new(&zone);
    let owner = Role::create(&env, "owner", &owner());
    owner_migrates(&env, &owner);
    // The check-in deadline two minutes ago, the alert at it, alerts on.
    common::alert_due_rules(&env, offset, 2);
    env.policy("policy.absence_alerts", "true", "2000-01-01");
    env.import_roster(
        "roster.csv",
        "employee_id,name,department_id,department_name,role\n\
         S1,Ann,D001,Sales,supervisor\nA1,Bob,D001,Sales,employee\n",
    );
    owner.ok(&env, &["queues", "declare", "-q"]);
    owner.ok(&env, &["init-day", "-q"]);
    env.ok(&["checkin", "S1", "--kind", "in", "-q"]);
    env.ok(&["watch-dept", "D001", "--once", "-q"]);
    let queue = format!("{}.dept.D001", env.ns);
    assert_eq!(common::queue_depth(&queue), 0);

    let relay = Role::create(&env, "relay", &relay_with_alerts());
    let mut following = Relay::spawn(&env, relay.cmd(&env));
    wait_for("D001's absence alert in its queue", || common::queue_depth(&queue) == 1);
    following.signal(libc::SIGTERM);
    assert!(following.0.wait().unwrap().success());
    let shown: Vec<Value> = env
        .ok(&["watch-dept", "D001", "--once", "--json", "-q"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["type"], "absence_alert", "{shown:?}");
    let missing: Vec<&str> = shown[0]["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["employee_id"].as_str().unwrap())
        .collect();
    assert_eq!(missing, ["A1"], "{shown:?}");
}

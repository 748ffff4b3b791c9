//! Test harness: each test gets its own MySQL database and its own Redis/AMQP namespace on the
//! real services, and removes them when it ends (also when it fails).
#![allow(dead_code)]

pub mod cluster;
pub mod contract;
pub mod day;
pub mod journal;
pub mod private_mariadb;
pub mod private_redis;
pub mod pty;
pub mod rabbit;
pub mod relay;
pub mod roles;
pub mod slot_move;
pub mod stall;
pub mod tls;
// The set-up steps' argument lists, shared with the benchmarks.
#[path = "../../examples/common/steps.rs"]
pub mod steps;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use attendance::Board;
use attendance::Keys;
use chrono::{NaiveDate, NaiveDateTime, TimeZone};
use mysql::prelude::Queryable;
use redis::Commands;

pub const REDIS_URL: &str = "redis://127.0.0.1:6379/";
pub const MYSQL_SERVER: &str = "mysql://root@127.0.0.1:3306/";
pub const AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
/// A broker URL on a closed port (1): a command run with it leaves its events in the outbox.
pub const CLOSED_BROKER: &str = "amqp://guest:guest@127.0.0.1:1/%2f";

pub struct TestEnv {
    pub ns: String,
    pub db: String,
    /// The MySQL server of its database, `mysql://root@host:port/` ([`MYSQL_SERVER`] unless a
    /// test runs on a server of its own: the database is made and dropped there).
    pub mysql_server: String,
    pub tz: String,
    pub dir: PathBuf,
    /// The Redis the binary is given: the shared single node, or a test cluster's URL.
    pub redis_url: String,
    /// The secret of this environment's signing key (id [`KEY_ID`]): every command signs
    /// the events it records with it (`signing.key_file`), so the whole suite runs signed.
    pub key_secret: String,
}

/// The rulebook every migrated test environment starts with, imported by `migrate` from these
/// variables (the one command that still reads them): tests punch on fixed days in the past,
/// which the default week-long back-dating limit would refuse as the calendar moves on (the
/// bound, ten years, keeps the suite's 2026 dates accepted until 2036;
/// `durability::redis_crash` tests the limit); those punches are not held for review (the
/// widest replay window; `review` sets the default 15 minutes back to test the rule); and a
/// following relay sends no absence alerts into the department queues whose messages the tests
/// count (`relay::alerts` turns them on).
pub const SUITE_POLICY: [(&str, &str); 3] = [
    ("ATTENDANCE_POLICY_MAX_BACKDATE_DAYS", "3660"),
    ("ATTENDANCE_POLICY_REPLAY_WINDOW_MINUTES", "5270400"),
    ("ATTENDANCE_POLICY_ABSENCE_ALERTS", "false"),
];

/// The key id of every test environment's signing key.
pub const KEY_ID: &str = "test-kiosk";

/// A fresh random secret for a signing key (base64 of 32 bytes).
pub fn new_secret() -> String {
    use base64::Engine;
    let raw = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    base64::engine::general_purpose::STANDARD.encode(&raw.as_bytes()[..32])
}

impl TestEnv {
    /// A fresh namespace and database (not yet migrated), in the given company zone.
    pub fn new(tz: &str) -> TestEnv {
        TestEnv::on_redis(tz, REDIS_URL)
    }

    /// A fresh namespace and database whose commands use the given Redis (a cluster's URL).
    pub fn on_redis(tz: &str, redis_url: &str) -> TestEnv {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let ns = format!("t{}", &id[..12]);
        let dir = std::env::temp_dir().join(format!("att-test-{ns}"));
        std::fs::create_dir_all(&dir).unwrap();
        let env = TestEnv {
            db: format!("att_{ns}"),
            mysql_server: MYSQL_SERVER.to_string(),
            ns,
            tz: tz.to_string(),
            dir,
            redis_url: redis_url.to_string(),
            key_secret: new_secret(),
        };
        env.file(
            "signing.key",
            &format!("key_id = \"{KEY_ID}\"\nsecret = \"{}\"\n", env.key_secret),
        );
        env
    }

    /// A kiosk's Ed25519 key, made by `keys generate` and added to the registry by `keys add`
    /// (`--replay` when `replay`). Returns its key file: the kiosk's `signing.key_file`
    /// (`ATTENDANCE_SIGNING_KEY_FILE`, see [`TestEnv::as_kiosk`]).
    pub fn registered_key(&self, id: &str, replay: bool) -> PathBuf {
        let key = self.dir.join(format!("{id}.key"));
        let out = self.ok(&["keys", "generate", id, "--out", key.to_str().unwrap(), "--json"]);
        let public: serde_json::Value = serde_json::from_str(&out).unwrap();
        let public = self.file(&format!("{id}.pub"), public["public_key"].as_str().unwrap());
        let mut add = vec!["keys", "add", id, "--public-key", public.to_str().unwrap(), "-q"];
        if replay {
            add.push("--replay");
        }
        self.ok(&add);
        key
    }

    /// The binary run with `args` and `key` as its signing key (`signing.key_file`), for its
    /// output whatever its exit.
    pub fn as_kiosk(&self, key: &Path, args: &[&str]) -> std::process::Output {
        self.cmd()
            .env("ATTENDANCE_SIGNING_KEY_FILE", key)
            .args(args)
            .output()
            .unwrap()
    }

    /// The binary run with `args` and no key material at all (no key file, no keyring): a
    /// supervisor's machine, or the owner's jobs, which verify with the registry's public keys.
    pub fn without_secrets(&self, args: &[&str]) -> std::process::Output {
        self.cmd()
            .env_remove("ATTENDANCE_SIGNING_KEY_FILE")
            .env_remove("ATTENDANCE_SIGNING_KEYRING_FILE")
            .args(args)
            .output()
            .unwrap()
    }

    /// Write a keyring (`signing.keyring_file`): keys as (id, secret, replay), and the revoked
    /// ids. Returns its path. The binary ignores `replay` (the registry's word alone): a test
    /// writes it to show that a self-written grant does nothing.
    pub fn keyring(&self, keys: &[(&str, &str, bool)], revoked: &[&str]) -> PathBuf {
        let mut text = format!("revoked = {revoked:?}\n");
        for (id, secret, replay) in keys {
            text += &format!("[keys.{id:?}]\nsecret = {secret:?}\nreplay = {replay}\n");
        }
        self.file("keyring.toml", &text)
    }

    /// The binary run with `args`, this environment's settings and `ring` as the keyring
    /// (`signing.keyring_file`), for its output whatever its exit.
    pub fn with_keyring(&self, ring: &Path, args: &[&str]) -> std::process::Output {
        self.cmd()
            .env("ATTENDANCE_SIGNING_KEYRING_FILE", ring)
            .args(args)
            .output()
            .unwrap()
    }

    /// A fresh environment, migrated, with the suite's rulebook ([`SUITE_POLICY`]).
    pub fn migrated(tz: &str) -> TestEnv {
        let env = TestEnv::new(tz);
        env.migrate();
        env
    }

    /// `migrate`, importing [`SUITE_POLICY`] as the rulebook's first version (the import a
    /// host's old policy settings get, docs/policy.md). Returns stdout.
    pub fn migrate(&self) -> String {
        expect_ok(
            &["migrate"],
            self.cmd().envs(SUITE_POLICY).arg("migrate").output().unwrap(),
        )
    }

    /// `policy set KEY VALUE --from FROM` (the owner's account: the test's root).
    pub fn policy(&self, key: &str, value: &str, from: &str) {
        self.ok(&[
            "policy",
            "set",
            key,
            value,
            "--from",
            from,
            "--reason",
            "the test's rules",
            "-q",
        ]);
    }

    pub fn mysql_url(&self) -> String {
        format!("{}{}", self.mysql_server, self.db)
    }

    /// The binary, with this environment's settings and nothing from the caller's.
    pub fn std_cmd(&self) -> std::process::Command {
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("attendance"));
        for (k, _) in std::env::vars() {
            if k.starts_with("ATTENDANCE_") {
                c.env_remove(k);
            }
        }
        c.env("ATTENDANCE_REDIS_URL", &self.redis_url)
            .env("ATTENDANCE_MYSQL_URL", self.mysql_url())
            .env("ATTENDANCE_AMQP_URL", AMQP_URL)
            .env("ATTENDANCE_NAMESPACE", &self.ns)
            .env("ATTENDANCE_TIMEZONE", &self.tz)
            // The user's config place is the test's own folder: a developer's
            // ~/.config/attendance/config.toml never leaks into a test.
            .env("XDG_CONFIG_HOME", &self.dir)
            .env("ATTENDANCE_SIGNING_KEY_FILE", self.dir.join("signing.key"));
        c
    }

    /// The binary as an assert_cmd `Command`.
    pub fn cmd(&self) -> Command {
        Command::from_std(self.std_cmd())
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd().args(args).output().unwrap()
    }

    /// Run and require exit 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        expect_ok(args, self.run(args))
    }

    /// Every attendance row, one string each, in key order.
    pub fn attendance_rows(&self) -> Vec<String> {
        self.mysql()
            .query(
                "SELECT CONCAT_WS('|', work_date, employee_id, department_id, status, IFNULL(first_in, '-'), \
                 IFNULL(last_out, '-'), late_minutes, early_minutes, punches, corrected) \
                 FROM attendance ORDER BY work_date, employee_id",
            )
            .unwrap()
    }

    /// Run and require the exit code; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        let o = self.run(args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(
            o.status.code(),
            Some(code),
            "attendance {args:?}: stderr {err} stdout {}",
            String::from_utf8_lossy(&o.stdout)
        );
        err
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let out = self.ok(args);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
    }

    /// Write a file in the test's own folder.
    /// Private to its owner (mode 0600), as a config file holding a password must be.
    pub fn file(&self, name: &str, content: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let p = self.dir.join(name);
        std::fs::write(&p, content).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        p
    }

    pub fn redis(&self) -> redis::Connection {
        redis::Client::open(REDIS_URL).unwrap().get_connection().unwrap()
    }

    pub fn mysql(&self) -> mysql::PooledConn {
        mysql::Pool::new(self.mysql_url().as_str()).unwrap().get_conn().unwrap()
    }

    /// Every Redis key of this namespace, sorted.
    pub fn redis_keys(&self) -> Vec<String> {
        let mut con = self.redis();
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{}:*", self.ns))
            .query(&mut con)
            .unwrap();
        keys.sort();
        keys
    }

    /// A snapshot of every key of the namespace and its content, to prove nothing changed.
    pub fn redis_snapshot(&self) -> Vec<(String, String)> {
        let mut con = self.redis();
        self.redis_keys()
            .into_iter()
            .map(|k| {
                let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(&k).query(&mut con).unwrap();
                (k, format!("{dump:?}"))
            })
            .collect()
    }

    /// A night shift (22:00-06:00, 30 minutes' break, grace 10 and 5, every day) imported and
    /// assigned to department `dept` from `from` (`YYYY-MM-DD`).
    pub fn assign_night_shift(&self, dept: &str, from: &str) {
        self.assign_night_shift_to("department", dept, from);
    }

    /// [`TestEnv::assign_night_shift`] to a `scope` (`department` or `employee`) and its id.
    pub fn assign_night_shift_to(&self, scope: &str, target: &str, from: &str) {
        let shifts = self.file(
            "night-shift.csv",
            "name,start,end,late_grace,early_grace,work_days,break,part_time\n\
             night,22:00,06:00,10,5,mon-sun,30,false\n",
        );
        self.ok(&["shifts", "import", shifts.to_str().unwrap(), "-q"]);
        let a = self.file(
            "night-assign.csv",
            &format!("scope,target,from,shift\n{scope},{target},{from},night\n"),
        );
        self.ok(&["shifts", "assign", a.to_str().unwrap(), "-q"]);
    }

    /// The parking queue's messages as `dlq list --json` shows them: (message id, reason), sorted.
    pub fn parked(&self) -> Vec<(String, String)> {
        let listed = self.json(&["dlq", "list", "--json"]);
        let mut out: Vec<(String, String)> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["message_id"].as_str().unwrap_or("").to_string(),
                    p["reason"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        out.sort();
        out
    }

    /// The employees of a department, in id order.
    pub fn members(&self, dept: &str) -> Vec<String> {
        self.mysql()
            .exec("SELECT id FROM employees WHERE department_id = ? ORDER BY id", (dept,))
            .unwrap()
    }

    /// An employee of D001 who is not its supervisor, and the supervisor.
    pub fn member_and_supervisor(&self) -> (String, String) {
        let sup: String = self
            .mysql()
            .exec_first("SELECT employee_id FROM supervisors WHERE department_id = 'D001'", ())
            .unwrap()
            .unwrap();
        let emp = self.members("D001").into_iter().find(|e| *e != sup).unwrap();
        (emp, sup)
    }

    /// The library's own key builder for this namespace: tests never spell a key format.
    pub fn keys(&self) -> Keys {
        Keys::new(&self.ns)
    }

    /// The library's board handle on this namespace, on the Redis the binary is given.
    pub fn board_handle(&self) -> Board {
        self.board_in(&self.ns)
    }

    /// The library's board handle on another namespace (`<ns>:a`: one test, two boards).
    pub fn board_in(&self, namespace: &str) -> Board {
        Board::open(&attendance::Config {
            redis_url: self.redis_url.clone(),
            namespace: namespace.to_string(),
            ..Default::default()
        })
        .unwrap()
    }

    /// A department's board of a day (`YYYY-MM-DD`): employee id -> punches.
    pub fn board(&self, dept: &str, day: &str) -> HashMap<String, String> {
        self.redis().hgetall(self.keys().board(dept, date(day))).unwrap()
    }

    /// The keys of a day's boards, sorted.
    pub fn board_keys(&self, day: &str) -> Vec<String> {
        self.matching(&self.keys().board_pattern(date(day)))
    }

    /// A department's outbox: event id -> event JSON.
    pub fn outbox(&self, dept: &str) -> HashMap<String, String> {
        self.redis().hgetall(self.keys().outbox(dept)).unwrap()
    }

    /// Events waiting in every outbox of the namespace.
    pub fn outbox_events(&self) -> usize {
        let mut con = self.redis();
        self.matching(&self.keys().outbox_pattern())
            .iter()
            .map(|k| con.hlen::<_, usize>(k).unwrap())
            .sum()
    }

    /// Keys matching a pattern, sorted.
    fn matching(&self, pattern: &str) -> Vec<String> {
        let mut keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(&mut self.redis()).unwrap();
        keys.sort();
        keys
    }

    /// Check in or out at a local time of the company's zone (`2026-11-20T08:50:00`); with
    /// `broker_down`, against a closed broker port so that the event waits in the outbox.
    pub fn punch(&self, emp: &str, kind: &str, local: &str, broker_down: bool) {
        let at = NaiveDateTime::parse_from_str(local, "%Y-%m-%dT%H:%M:%S").unwrap();
        let tz: chrono_tz::Tz = self.tz.parse().unwrap();
        let at = tz.from_local_datetime(&at).single().unwrap().to_rfc3339();
        let mut c = self.cmd();
        c.args(["checkin", emp, "--kind", kind, "--at", &at, "-q"]);
        if broker_down {
            c.env("ATTENDANCE_AMQP_URL", CLOSED_BROKER);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// Punch the lines of a punch file (`employee_id,kind,at` lines, without the header) in one
    /// `checkin --file` run, their notifications left waiting (no broker needed).
    pub fn punch_file(&self, lines: &str) {
        let f = self.file("punches.csv", &format!("employee_id,kind,at\n{lines}"));
        let o = self
            .cmd()
            .args(["checkin", "--file", f.to_str().unwrap(), "-q"])
            .env("ATTENDANCE_AMQP_URL", CLOSED_BROKER)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// An unlabelled punch (`checkin EMP --at AT --json`: the board or the shift decides in or
    /// out) at an exact instant; with `broker_down`, its event left waiting in the outbox.
    /// Returns the printed JSON.
    pub fn checkin_json(&self, emp: &str, at: &str, broker_down: bool) -> serde_json::Value {
        let mut c = self.cmd();
        c.args(["checkin", emp, "--at", at, "--json"]);
        if broker_down {
            c.env("ATTENDANCE_AMQP_URL", CLOSED_BROKER);
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// Today in the company's zone (`ATTENDANCE_TIMEZONE`, the zone the binary judges days in),
    /// by this host's clock, which is the Redis server's here: the date the binary takes for
    /// today.
    pub fn today(&self) -> NaiveDate {
        let tz: chrono_tz::Tz = self.tz.parse().unwrap();
        chrono::Utc::now().with_timezone(&tz).date_naive()
    }

    /// Write a roster CSV (`name` in the test's folder) and `org import` it quietly; returns
    /// the file.
    pub fn import_roster(&self, name: &str, csv: &str) -> PathBuf {
        let f = self.file(name, csv);
        self.ok(&["org", "import", f.to_str().unwrap(), "-q"]);
        f
    }

    /// Import the shifts (`shifts import` CSV text), assign them (`shifts assign` CSV text) and
    /// import the calendar (`calendar import` CSV text), quietly.
    pub fn work_rules(&self, shifts: &str, assign: &str, calendar: &str) {
        for (verb, name, text) in [
            (["shifts", "import"], "shifts.csv", shifts),
            (["shifts", "assign"], "assign.csv", assign),
            (["calendar", "import"], "cal.csv", calendar),
        ] {
            let f = self.file(name, text);
            self.ok(&[verb[0], verb[1], f.to_str().unwrap(), "-q"]);
        }
    }

    /// The operating-system account the tests run as (who `correct` acts as).
    pub fn os_login() -> String {
        let o = std::process::Command::new("id").arg("-un").output().unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    }

    /// Map the account the tests run as to `emp` in the roster (the login column), taking it
    /// from whoever held it: `correct` then acts as `emp`. The rows' `updated_at` is kept, so
    /// the Redis roster cache does not count this as a roster change.
    pub fn act_as(&self, emp: &str) {
        let me = TestEnv::os_login();
        let mut c = self.mysql();
        c.exec_drop(
            "UPDATE employees SET login = NULL, updated_at = updated_at WHERE login = ?",
            (&me,),
        )
        .unwrap();
        c.exec_drop(
            "UPDATE employees SET login = ?, updated_at = updated_at WHERE id = ?",
            (&me, emp),
        )
        .unwrap();
    }

    /// `by` (the department's supervisor) corrects `emp`'s check-out of `day` to 18:15, run by
    /// the account mapped to `by`.
    pub fn correct_out(&self, emp: &str, day: &str, by: &str) {
        self.act_as(by);
        self.ok(&[
            "correct",
            emp,
            "--date",
            day,
            "--out",
            "18:15",
            "--reason",
            "kiosk down",
            "--by",
            by,
        ]);
    }

    /// Delete the namespace's exchanges and queues (which `org import` declared ahead, with the
    /// default settings): a test of other AMQP settings, or of a broker without a journal,
    /// starts from a bare broker.
    pub fn bare_broker(&self) {
        let depts: Vec<String> = self.mysql().query("SELECT id FROM departments").unwrap();
        cleanup_amqp(&self.ns, &depts);
    }

    /// The event ids `watch-dept DEPT --once --json` shows, in order (and acks).
    pub fn shown_ids(&self, dept: &str) -> Vec<String> {
        event_ids(&self.ok(&["watch-dept", dept, "--once", "--json"]))
    }

    /// One stored day of an employee as `status|late_minutes|early_minutes`.
    pub fn day_row(&self, day: &str, emp: &str) -> String {
        self.mysql()
            .exec_first(
                "SELECT CONCAT_WS('|', status, late_minutes, early_minutes) FROM attendance \
                 WHERE work_date = ? AND employee_id = ?",
                (day, emp),
            )
            .unwrap()
            .unwrap_or_else(|| panic!("no row for {emp} on {day}"))
    }

    /// What a fail-over leaves in the record of `day`: its boards on Redis servers other than
    /// those its layout recorded (a promoted replica has a `run_id` of its own). The test then
    /// edits the shared Redis to what the promoted replica lacks; settle checks such a day
    /// against the journal.
    pub fn failed_over(&self, day: &str) {
        let mut db = self.mysql();
        db.exec_drop(
            "UPDATE day_layouts SET redis_identity = 'the-master-that-died' WHERE work_date = ?",
            (day,),
        )
        .unwrap();
        assert_eq!(db.affected_rows(), 1, "{day} was never laid out");
    }

    /// Row count of a table in this test's database.
    pub fn count(&self, table: &str) -> u64 {
        self.mysql()
            .query_first(format!("SELECT COUNT(*) FROM {table}"))
            .unwrap()
            .unwrap()
    }

    /// `doctor --json`'s verdict on the check `name`: (status, detail, doctor's exit code).
    pub fn doctor_check(&self, name: &str) -> (String, String, i32) {
        self.doctor_check_with(&[], name)
    }

    /// [`TestEnv::doctor_check`] with these environment variables set.
    pub fn doctor_check_with(&self, vars: &[(&str, &str)], name: &str) -> (String, String, i32) {
        let mut cmd = self.cmd();
        cmd.args(["doctor", "--json"]);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let o = cmd.output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let c = v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no check {name}: {v}"));
        (
            c["status"].as_str().unwrap().into(),
            c["detail"].as_str().unwrap().into(),
            o.status.code().unwrap(),
        )
    }
}

/// The `event_id` of each line of a `--json` stream (`watch-dept --once --json`), in order.
pub fn event_ids(json_lines: &str) -> Vec<String> {
    json_lines
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["event_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Owned arguments as the `&[&str]` the runners take.
pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// A `YYYY-MM-DD` day.
pub fn date(day: &str) -> NaiveDate {
    NaiveDate::parse_from_str(day, "%Y-%m-%d").unwrap()
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        if self.redis_url != REDIS_URL {
            cluster::Cluster::remove_namespace(&self.redis_url, &self.ns);
        } else if let Ok(mut con) = redis::Client::open(REDIS_URL).and_then(|c| c.get_connection()) {
            let keys: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{}:*", self.ns))
                .query(&mut con)
                .unwrap_or_default();
            for chunk in keys.chunks(500) {
                let _: redis::RedisResult<()> = redis::cmd("DEL").arg(chunk).query(&mut con);
            }
        }
        // The departments name the AMQP queues to delete: read them before the database goes.
        let mut depts: Vec<String> = Vec::new();
        if let Ok(pool) = mysql::Pool::new(self.mysql_server.as_str()) {
            if let Ok(mut c) = pool.get_conn() {
                depts = c
                    .query(format!("SELECT id FROM `{}`.departments", self.db))
                    .unwrap_or_default();
                let _ = c.query_drop(format!("DROP DATABASE IF EXISTS `{}`", self.db));
            }
        }
        cleanup_amqp(&self.ns, &depts);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Require exit 0 of a run of `attendance args`; returns stdout.
pub fn expect_ok(args: &[&str], o: Output) -> String {
    assert!(
        o.status.success(),
        "attendance {args:?} failed ({:?}): {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The cells of a CSV text, its header line included.
pub fn csv_cells(text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// Messages ready in a queue of the real broker.
/// The `employee_id` of each line of a `--json` listing (one object a line: `watch-dept`'s).
pub fn employee_ids(lines: &str) -> Vec<String> {
    lines
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["employee_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

pub fn queue_depth(queue: &str) -> u32 {
    queue_depth_at(AMQP_URL, queue)
}

/// Messages ready in a queue of the broker at `url` (a test's own).
pub fn queue_depth_at(url: &str, queue: &str) -> u32 {
    let mut conn = amiquip::Connection::insecure_open(url).unwrap();
    let ch = conn.open_channel(None).unwrap();
    let n = ch
        .queue_declare_passive(queue)
        .unwrap()
        .declared_message_count()
        .unwrap();
    conn.close().ok();
    n
}

/// A config file in the test's folder whose broker timeouts are short (a proxy that drops or
/// stalls the connection is found out in under a second), with `extra` lines in `[amqp]`.
pub fn quick_broker_config(env: &TestEnv, extra: &str) -> std::path::PathBuf {
    env.file(
        "att.toml",
        &format!("[amqp]\nconnect_timeout_ms = 1000\nconfirm_timeout_ms = 800\nclose_timeout_ms = 300\n{extra}"),
    )
}

/// A child's output, line by line, as it comes (read on a thread of its own).
pub fn lines_of(out: impl std::io::Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(out)).map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Empty a queue of the shared broker: what a queue whose leader died without keeping its
/// confirms holds.
pub fn purge_queue(queue: &str) {
    let mut conn = amiquip::Connection::insecure_open(AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    ch.queue_purge(queue).unwrap();
    conn.close().ok();
}

/// Publish a raw message straight to a queue of the real broker (through the default
/// exchange, as the guest account), the way a forger with broker credentials would.
pub fn publish_to_queue(queue: &str, body: &str, message_id: &str) {
    let mut conn = amiquip::Connection::insecure_open(AMQP_URL).unwrap();
    let props = amiquip::AmqpProperties::default()
        .with_message_id(message_id.into())
        .with_delivery_mode(2)
        .with_timestamp(chrono::Utc::now().timestamp() as u64);
    conn.open_channel(None)
        .unwrap()
        .basic_publish("", amiquip::Publish::with_properties(body.as_bytes(), queue, props))
        .unwrap();
    conn.close().unwrap();
}

/// Delete every exchange and queue of the namespace (AMQP names start with `<ns>.`): the
/// common ones and one queue per department of the roster.
pub fn cleanup_amqp(ns: &str, departments: &[String]) {
    let cfg = attendance::Config {
        amqp_url: AMQP_URL.to_string(),
        namespace: ns.to_string(),
        ..Default::default()
    };
    if let Err(e) = attendance::teardown(&cfg, departments) {
        eprintln!("cleanup of AMQP names under {ns} failed: {e:#}");
    }
}

/// A zone where it is now between 04:00 and 20:59, so that "a few minutes ago" and the
/// evening's check-out time are the same day: `Etc/GMT-N` is UTC+N.
pub fn midday_zone() -> (String, i64) {
    use chrono::Timelike;
    let h = i64::from(chrono::Utc::now().hour());
    if (4..=20).contains(&h) {
        return ("UTC".into(), 0);
    }
    let n = 12 - h;
    let name = if n > 0 {
        format!("Etc/GMT-{n}")
    } else {
        format!("Etc/GMT+{}", -n)
    };
    (name, n)
}

/// A zone (`Etc/GMT-X` is UTC+X) where it is now about 14:00: a morning's 07:55 is hours back
/// on the same work day whenever a test runs (a back-dated punch without a fixed date).
pub fn afternoon_zone() -> String {
    match 14 - chrono::Timelike::hour(&chrono::Utc::now()) as i32 {
        0 => "Etc/GMT".to_string(),
        x if x > 0 => format!("Etc/GMT-{x}"),
        x => format!("Etc/GMT+{}", -x),
    }
}

/// Rules under which the absence alert is due now: the check-in deadline `minutes_ago` minutes
/// ago in a zone `offset` hours from UTC (see [`midday_zone`]), no grace, the alert at the
/// deadline, every day a work day, check-outs from 23:30. Alerts stay as the suite's rulebook
/// has them (off) unless the caller turns them on.
pub fn alert_due_rules(env: &TestEnv, offset: i64, minutes_ago: i64) {
    let local = chrono::Utc::now() + chrono::Duration::hours(offset) - chrono::Duration::minutes(minutes_ago);
    for (key, value) in [
        ("policy.checkout_from", "23:30".to_string()),
        ("policy.checkin_deadline", local.format("%H:%M").to_string()),
        ("policy.grace_minutes", "0".into()),
        ("policy.absence_alert_minutes", "0".into()),
        ("policy.work_days", "mon,tue,wed,thu,fri,sat,sun".into()),
    ] {
        env.policy(key, &value, "2000-01-01");
    }
}

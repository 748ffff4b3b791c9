//! The JSON contract (docs/commands.md, "The JSON contract"): every command with `--json` has
//! a JSON Schema in docs/schema/, and what it prints against the real services validates
//! against it, empty answers included. A new command with `--json` and no schema fails
//! `every_command_with_json_has_a_schema`; one whose output the scenario below never checks
//! fails `every_json_output_validates_against_its_schema`.
//!
//! `JSON_CONTRACT_DUMP=DIR cargo test --test json_contract` also writes every output checked
//! into DIR (`<command>.<n>.json`), for whoever writes or reviews a schema.

use crate::common;

use crate::common::contract;
use mysql::prelude::Queryable;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Output;

use clap::CommandFactory;
use common::TestEnv;
use contract::{load, schema_dir, schema_file};
use serde_json::Value;

const TZ: &str = "Europe/Paris";
const DAY: &str = "2026-11-20";
/// A day no row, leave or calendar entry is ever written for: the empty answers.
const EMPTY_DAY: &str = "2026-10-05";

/// Every command (by its words, `report day`) that takes `--json`, from clap's tree.
fn commands_with_json() -> BTreeSet<String> {
    fn walk(cmd: &clap::Command, path: &str, out: &mut BTreeSet<String>) {
        if cmd.get_arguments().any(|a| a.get_long() == Some("json")) {
            out.insert(path.trim().to_string());
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = BTreeSet::new();
    walk(&attendance::Cli::command(), "", &mut out);
    out
}

#[test]
fn every_command_with_json_has_a_schema() {
    let commands = commands_with_json();
    assert!(commands.len() > 30, "the walk found the commands: {commands:?}");
    for c in &commands {
        let path = schema_file(c);
        assert!(
            path.exists(),
            "`attendance {c} --json` has no schema: write {}",
            path.display()
        );
        let schema = load(&path);
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{c}: draft 2020-12"
        );
        let id = schema["$id"].as_str().unwrap_or_default();
        assert!(
            id.ends_with(&format!("/v1/{}.json", c.replace(' ', "-"))),
            "{c}: $id {id:?} names its version"
        );
        jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{c}: not a valid schema: {e}"));
    }
    // The contract's page lists each one.
    let page = std::fs::read_to_string(schema_dir().join("../commands.md")).unwrap();
    for c in &commands {
        let link = format!("(schema/{}.json)", c.replace(' ', "-"));
        assert!(page.contains(&link), "docs/commands.md lists no {link} for `{c}`");
    }
    // And no schema for a command that is gone.
    for entry in std::fs::read_dir(schema_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".json") else {
            continue;
        };
        assert!(
            commands.iter().any(|c| c.replace(' ', "-") == stem),
            "docs/schema/{name} belongs to no command with --json"
        );
    }
}

/// The outputs checked, by command, and how each validates.
struct Contract {
    validators: BTreeMap<String, jsonschema::Validator>,
    checked: BTreeMap<String, usize>,
    dump: Option<PathBuf>,
}

impl Contract {
    fn new() -> Contract {
        let validators = commands_with_json()
            .into_iter()
            .map(|c| {
                let v = contract::validator(&c);
                (c, v)
            })
            .collect();
        Contract {
            validators,
            checked: BTreeMap::new(),
            dump: std::env::var_os("JSON_CONTRACT_DUMP").map(PathBuf::from),
        }
    }

    /// Validate one document (or one line of a stream) printed by `command`.
    fn validate(&mut self, command: &str, doc: &Value) {
        let v = self
            .validators
            .get(command)
            .unwrap_or_else(|| panic!("`{command}` has no --json"));
        contract::check(v, command, doc);
        one_time_form(command, doc, "");
        let n = self.checked.entry(command.to_string()).or_default();
        *n += 1;
        if let Some(dir) = &self.dump {
            std::fs::create_dir_all(dir).unwrap();
            let file = dir.join(format!("{}.{n}.json", command.replace(' ', "-")));
            std::fs::write(file, serde_json::to_string_pretty(doc).unwrap()).unwrap();
        }
    }

    /// stdout of a finished command: one document, or (a stream) one per line.
    fn output(&mut self, command: &str, o: &Output, stream: bool) -> Vec<Value> {
        let out = String::from_utf8_lossy(&o.stdout);
        let docs: Vec<Value> = if stream {
            out.lines().map(|l| parse(command, l)).collect()
        } else {
            vec![parse(command, out.trim())]
        };
        for d in &docs {
            self.validate(command, d);
        }
        docs
    }

    /// Run `args` (the command's words first, then `--json`), require `code`, validate.
    fn run(&mut self, env: &TestEnv, command: &str, args: &[&str], code: i32) -> Value {
        let o = env.run(&[args, &["--json"]].concat());
        assert_eq!(
            o.status.code(),
            Some(code),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        self.output(command, &o, false).remove(0)
    }

    fn ok(&mut self, env: &TestEnv, command: &str, args: &[&str]) -> Value {
        self.run(env, command, args, 0)
    }

    /// A back-dated punch at DAY's `hhmm` under the default replay window: held for review
    /// (exit 7, `checkin`'s held object). Returns its review id.
    fn held(&mut self, env: &TestEnv, emp: &str, kind: &str, hhmm: &str) -> String {
        env.policy("policy.replay_window_minutes", "15", "2000-01-01");
        let o = env
            .cmd()
            .args(["checkin", emp, "--kind", kind, "--at", &at(hhmm), "--json"])
            .output()
            .unwrap();
        env.policy("policy.replay_window_minutes", "5270400", "2000-01-01");
        assert_eq!(o.status.code(), Some(7), "{}", String::from_utf8_lossy(&o.stderr));
        self.output("checkin", &o, false).remove(0)["review_id"].to_string()
    }
}

/// Beyond the schemas' declared instants: any string anywhere in an output that reads as a
/// date and time is an instant in the contract's one form, and none is a bare time of day
/// (`config show`'s values are settings, `09:00` among them, and so are a shift's times and the
/// rulebook's values).
fn one_time_form(command: &str, v: &Value, at: &str) {
    match v {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .for_each(|(i, x)| one_time_form(command, x, &format!("{at}/{i}"))),
        Value::Object(m) => m
            .iter()
            .for_each(|(k, x)| one_time_form(command, x, &format!("{at}/{k}"))),
        Value::String(s) => {
            let b = s.as_bytes();
            let digits = |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
            let dated =
                digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'-') && digits(8..10);
            if dated && matches!(b.get(10), Some(b'T' | b' ')) {
                let t = chrono::DateTime::parse_from_rfc3339(s);
                let one_form = t.is_ok_and(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, false) == *s);
                assert!(
                    one_form,
                    "`{command} --json` {at}: {s:?} is not RFC 3339 to the second with its offset"
                );
            }
            let clock = digits(0..2) && b.get(2) == Some(&b':') && digits(3..5) && (b.len() == 5 || b.len() == 8);
            // A shift's start and end are settings too (`shifts import`, `shifts list`), and so
            // are the rulebook's values (`policy.checkin_deadline`).
            let settings = matches!(
                command,
                "config show" | "shifts import" | "shifts list" | "policy show" | "policy set" | "policy history"
            );
            assert!(
                settings || !clock,
                "`{command} --json` {at}: {s:?} is a time with no date nor offset"
            );
        }
        _ => {}
    }
}

fn parse(command: &str, text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("`{command} --json` printed no JSON ({e}): {text}"))
}

/// DAY at a local time of the company's zone, as RFC 3339.
fn at(hhmm: &str) -> String {
    use chrono::TimeZone;
    let tz: chrono_tz::Tz = TZ.parse().unwrap();
    let t = chrono::NaiveDateTime::parse_from_str(&format!("{DAY} {hhmm}"), "%Y-%m-%d %H:%M").unwrap();
    tz.from_local_datetime(&t).single().unwrap().to_rfc3339()
}

/// One scenario over every command with `--json`, with empty answers where a command can give one.
#[test]
fn every_json_output_validates_against_its_schema() {
    let mut c = Contract::new();
    let env = TestEnv::with_roster(TZ, 6, 2);
    let d1 = env.members("D001");
    let (emp, sup) = env.member_and_supervisor();
    let other = d1.iter().find(|e| **e != emp && **e != sup).unwrap().clone();

    // The roster.
    c.ok(&env, "org list", &["org", "list"]);
    let roster = env.roster_file(6, 2);
    c.ok(
        &env,
        "org import",
        &["org", "import", roster.to_str().unwrap(), "--dry-run"],
    );
    c.ok(&env, "config show", &["config", "show"]);

    // The day: lay it out, punch, a punch held for review, a bulk file, a void.
    c.ok(&env, "init-day", &["init-day", "--date", DAY]);
    c.ok(&env, "status", &["status", &emp, "--date", DAY]);
    let checked = c.ok(
        &env,
        "checkin",
        &["checkin", &emp, "--kind", "in", "--at", &at("08:50")],
    );
    assert_eq!(checked["notification"], "sent");
    c.ok(
        &env,
        "checkin",
        &["checkin", &emp, "--kind", "out", "--at", &at("18:05")],
    );
    c.ok(
        &env,
        "checkin",
        &["checkin", &other, "--kind", "in", "--at", &at("09:20")],
    );
    let file = env.file(
        "punches.csv",
        &format!("employee_id,kind,at\n{sup},in,{}\n", at("08:30")),
    );
    c.ok(&env, "checkin", &["checkin", "--file", file.to_str().unwrap()]);
    c.ok(&env, "status", &["status", &emp, "--date", DAY]);
    let review_id = c.held(&env, &other, "out", "17:40");
    c.ok(&env, "review list", &["review", "list"]);
    env.act_as(&sup);
    c.ok(&env, "review approve", &["review", "approve", &review_id]);
    let second = c.held(&env, &other, "in", "07:10");
    c.ok(
        &env,
        "review reject",
        &["review", "reject", &second, "--reason", "not on site"],
    );
    c.ok(&env, "review list", &["review", "list", "--date", EMPTY_DAY]);
    // By filter: a dry run, an approval that matches nothing, a rejection of what is pending.
    c.held(&env, &other, "in", "07:05");
    c.ok(
        &env,
        "review approve",
        &["review", "approve", "--all-pending", "--dry-run"],
    );
    c.ok(&env, "review approve", &["review", "approve", "--date", EMPTY_DAY]);
    let bulk = c.ok(
        &env,
        "review reject",
        &["review", "reject", "--date", DAY, "--reason", "not on site"],
    );
    assert_eq!(bulk["rejected"].as_u64(), Some(1), "{bulk}");
    c.ok(
        &env,
        "punch void",
        &[
            "punch",
            "void",
            &other,
            "--at",
            &format!("{DAY}T09:20"),
            "--reason",
            "wrong badge",
        ],
    );

    // Notifications: the relay, the supervisor's stream (punches and a void notice).
    let o = env.run(&["relay", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    c.output("relay", &o, true);
    let o = env.run(&["watch-dept", "D001", "--once", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let shown = c.output("watch-dept", &o, true);
    assert!(shown.iter().any(|m| m["type"] == "void") && shown.iter().any(|m| m["type"] == "punch"));
    let o = env.run(&["watch-dept", "D001", "--once", "--json"]);
    assert!(o.stdout.is_empty(), "nothing new: no line");
    c.ok(&env, "dlq list", &["dlq", "list"]);
    c.ok(&env, "dlq replay", &["dlq", "replay", "--all"]);
    c.ok(&env, "dlq purge", &["dlq", "purge", "--all", "--yes"]);
    c.ok(&env, "queues declare", &["queues", "declare"]);
    c.ok(&env, "queues purge", &["queues", "purge", "--yes"]);

    // Settle (with a board field no signed record backs: refused and counted), then what HR reads.
    let forged = env.members("D002")[0].clone();
    let board = env.keys().board("D002", common::date(DAY));
    let _: () = redis::Commands::hset(&mut env.redis(), &board, &forged, "i30000").unwrap();
    let settled = c.ok(&env, "settle", &["settle", "--date", DAY]);
    assert_eq!(settled["refused_punches"]["unbacked"], 1, "{settled}");
    c.ok(&env, "status", &["status", &emp, "--date", DAY]);
    c.ok(&env, "recover", &["recover", "--date", DAY, "--idle-ms", "300"]);
    c.ok(
        &env,
        "correct",
        &[
            "correct",
            &emp,
            "--date",
            DAY,
            "--out",
            "18:15",
            "--reason",
            "kiosk down",
            "--by",
            &sup,
        ],
    );
    // Overtime that needs approval on the day: the supervisor decides, for one and for all.
    env.policy("policy.overtime_needs_approval", "true", DAY);
    env.act_as(&sup);
    let one = ["--employee", emp.as_str(), "--date", DAY];
    c.ok(&env, "overtime approve", &[&["overtime", "approve"][..], &one].concat());
    let all = ["--dept", "D001", "--date", DAY, "--reason", "not asked for"];
    c.ok(&env, "overtime reject", &[&["overtime", "reject"][..], &all].concat());
    let (next, later) = ("2026-12-24", "2026-12-26");
    c.ok(&env, "calendar set", &["calendar", "set", next, "holiday"]);
    c.ok(
        &env,
        "policy set",
        &[
            "policy",
            "set",
            "policy.grace_minutes",
            "5",
            "--from",
            next,
            "--reason",
            "winter",
        ],
    );
    c.ok(&env, "policy show", &["policy", "show", "--date", next]);
    c.ok(&env, "policy history", &["policy", "history"]);
    c.ok(&env, "calendar unset", &["calendar", "unset", next]);
    let cal = env.file(
        "cal.csv",
        &format!("date,kind,note\n{next},holiday,Christmas Eve\n{later},workday,\n"),
    );
    c.ok(
        &env,
        "calendar import",
        &["calendar", "import", cal.to_str().unwrap(), "--dry-run"],
    );
    c.ok(&env, "calendar import", &["calendar", "import", cal.to_str().unwrap()]);
    c.ok(
        &env,
        "calendar list",
        &["calendar", "list", "--from", next, "--to", later],
    );
    let shifts = env.file(
        "shifts.csv",
        "name,start,end,late_grace,work_days,part_time\nnight,22:00,06:00,10,mon-sun,false\n",
    );
    let shifts = shifts.to_str().unwrap();
    c.ok(&env, "shifts import", &["shifts", "import", shifts, "--dry-run"]);
    c.ok(&env, "shifts import", &["shifts", "import", shifts]);
    let assign = env.file(
        "assign.csv",
        &format!("scope,target,from,shift\nemployee,{other},{later},night\n"),
    );
    let assign = assign.to_str().unwrap();
    c.ok(&env, "shifts assign", &["shifts", "assign", assign, "--dry-run"]);
    c.ok(&env, "shifts assign", &["shifts", "assign", assign]);
    c.ok(&env, "shifts list", &["shifts", "list"]);
    c.ok(&env, "shifts which", &["shifts", "which", &other, "--date", later]);
    c.ok(&env, "shifts which", &["shifts", "which", &emp, "--date", DAY]);
    let leave = c.ok(
        &env,
        "leave add",
        &["leave", "add", &other, next, next, "--kind", "sick"],
    );
    c.ok(&env, "leave list", &["leave", "list"]);
    c.ok(
        &env,
        "leave list",
        &["leave", "list", "--from", EMPTY_DAY, "--to", EMPTY_DAY],
    );
    c.ok(
        &env,
        "leave cancel",
        &["leave", "cancel", &leave["leave_id"].to_string()],
    );
    let (from, to) = (["--from", DAY], ["--to", DAY]);
    let range = [&from[..], &to[..]].concat();
    for day in [DAY, EMPTY_DAY] {
        c.ok(&env, "report day", &["report", "day", "--date", day]);
        c.ok(&env, "report absent", &["report", "absent", "--date", day]);
    }
    c.ok(
        &env,
        "report employee",
        &[&["report", "employee", &emp][..], &range].concat(),
    );
    c.ok(
        &env,
        "report employee",
        &["report", "employee", &emp, "--from", EMPTY_DAY, "--to", EMPTY_DAY],
    );
    c.ok(&env, "report dept", &[&["report", "dept", "D001"][..], &range].concat());
    c.ok(&env, "report month", &["report", "month", "--month", "2026-11"]);
    c.ok(&env, "report month", &["report", "month", "--month", "2026-10"]);
    c.ok(&env, "report payroll", &[&["report", "payroll"][..], &range].concat());
    for month in ["2026-11", "2026-10"] {
        c.ok(
            &env,
            "report timesheet",
            &["report", "timesheet", "--employee", &emp, "--month", month],
        );
    }
    c.ok(
        &env,
        "report corrections",
        &[&["report", "corrections"][..], &range].concat(),
    );
    c.ok(&env, "report punches", &[&["report", "punches"][..], &range].concat());
    c.ok(&env, "report runs", &["report", "runs"]);
    c.ok(&env, "report runs", &["report", "runs", "--failures"]);
    c.ok(&env, "report now", &["report", "now"]);
    // Someone in right now: the roll call's rows.
    c.ok(&env, "init-day", &["init-day"]);
    c.ok(&env, "checkin", &["checkin", &emp, "--kind", "in"]);
    let now = c.ok(&env, "report now", &["report", "now"]);
    assert_eq!(now["rows"][0]["employee_id"], emp.as_str(), "{now}");
    c.ok(&env, "report now", &["report", "now", "--counts"]);

    // Pay periods, closed and reopened by HR (a month nothing above touches).
    env.mysql()
        .exec_drop("UPDATE employees SET role = 'hr' WHERE id = ?", (&other,))
        .unwrap();
    env.act_as(&other);
    c.ok(&env, "period close", &["period", "close", "2026-09"]);
    c.ok(
        &env,
        "period reopen",
        &["period", "reopen", "2026-09", "--reason", "late note"],
    );

    // Upkeep.
    let out = env.dir.join("archive");
    std::fs::create_dir_all(&out).unwrap();
    c.ok(
        &env,
        "archive",
        &[
            "archive",
            "--before",
            "2026-11-21",
            "--out",
            out.to_str().unwrap(),
            "--dry-run",
        ],
    );
    c.ok(
        &env,
        "db partition",
        &["db", "partition", "--from", "2026-11", "--months", "2"],
    );
    // doctor's verdict on a shared test broker may be a warning (exit 4): its JSON is the same.
    let o = env.run(&["doctor", "--json"]);
    assert!(
        matches!(o.status.code(), Some(0 | 4)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    c.output("doctor", &o, false);
    c.ok(&env, "queues delete", &["queues", "delete", "--yes"]);

    // Last: a registry key turns the consumers' checks on for what runs after it.
    c.ok(&env, "keys list", &["keys", "list"]);
    let key = env.dir.join("kiosk-j.key");
    let made = c.ok(
        &env,
        "keys generate",
        &["keys", "generate", "kiosk-j", "--out", key.to_str().unwrap()],
    );
    let public = env.file("kiosk-j.pub", made["public_key"].as_str().unwrap());
    c.ok(
        &env,
        "keys add",
        &[
            "keys",
            "add",
            "kiosk-j",
            "--public-key",
            public.to_str().unwrap(),
            "--replay",
        ],
    );
    c.ok(
        &env,
        "keys revoke",
        &["keys", "revoke", "kiosk-j", "--at", &at("07:00"), "--reason", "retired"],
    );
    c.ok(&env, "keys list", &["keys", "list"]);
    let unchecked: Vec<&String> = c.validators.keys().filter(|k| !c.checked.contains_key(*k)).collect();
    assert!(unchecked.is_empty(), "no output of these was checked: {unchecked:?}");
}

/// `relay --follow --json`, the other stream: one line per pass that sent something, each a
/// `relay` object. A punch waits in the outbox (the broker was down), the relay starts and
/// sends it.
#[test]
fn relay_follow_prints_a_valid_line_per_pass() {
    use std::io::BufRead;
    let env = TestEnv::with_roster(TZ, 4, 1);
    let (emp, _) = env.member_and_supervisor();
    env.punch(&emp, "in", &format!("{DAY}T08:50:00"), true);
    let mut child = env
        .std_cmd()
        .args(["relay", "--follow", "--interval-ms", "60000", "--json", "-q"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    // Killed when the test ends, also on a panic.
    let _relay = common::relay::Relay(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("relay --follow printed a line for the pass that sent the punch");
    let v = parse("relay", &line);
    contract::check(&contract::validator("relay"), "relay", &v);
    assert_eq!((&v["sent"], &v["pending"]), (&1.into(), &0.into()), "{v}");
}

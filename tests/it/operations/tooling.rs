//! What ops run beside the commands, through the real binary on the real services: the
//! workbook of a report (read back with calamine against the CSV), the jobs' metrics files,
//! completions and man pages, the install script and the systemd units, `queues purge`.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use calamine::{open_workbook, Data, DataType, Reader, Xlsx};
use chrono::Utc;
use common::day::Day;
use common::{csv_cells, TestEnv};
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
const DAY: &str = "2026-11-20";

/// A workbook cell as the CSV writes it; dates and times must be real ones, not text.
fn as_csv(cell: &Data, csv: &str) -> String {
    match cell {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        Data::Float(f) => format!("{f}"),
        Data::Int(n) => n.to_string(),
        Data::DateTime(_) if csv.contains(':') && csv.contains('-') => {
            cell.as_datetime().unwrap().format("%Y-%m-%d %H:%M:%S").to_string()
        }
        Data::DateTime(_) if csv.contains(':') => cell.as_time().unwrap().format("%H:%M").to_string(),
        Data::DateTime(_) => cell.as_date().unwrap().to_string(),
        other => panic!("unexpected cell {other:?}"),
    }
}

/// The report as CSV and as a workbook written with -o: the same cells, typed. Returns the
/// workbook's cells.
fn workbook_matches_csv(env: &TestEnv, args: &[&str], sheet: &str) -> Vec<Vec<Data>> {
    let mut a = args.to_vec();
    a.extend(["--format", "csv"]);
    let csv = csv_cells(&env.ok(&a));
    let path = env.dir.join(format!("{sheet}.xlsx"));
    let mut a = args.to_vec();
    a.extend(["--format", "xlsx", "-o", path.to_str().unwrap()]);
    assert_eq!(env.ok(&a), "", "nothing on stdout with -o");
    let mut wb: Xlsx<_> = open_workbook(&path).unwrap();
    assert_eq!(wb.sheet_names(), [sheet]);
    let range = wb.worksheet_range(sheet).unwrap();
    let cells: Vec<Vec<Data>> = range.rows().map(|r| r.to_vec()).collect();
    assert_eq!(cells.len(), csv.len(), "{args:?}: rows");
    for (r, (xrow, crow)) in cells.iter().zip(&csv).enumerate() {
        let shown: Vec<String> = xrow.iter().zip(crow).map(|(x, c)| as_csv(x, c)).collect();
        assert_eq!(&shown, crow, "{args:?}: row {r}");
    }
    cells
}

#[test]
fn a_workbook_holds_the_csv_cells_with_dates_times_and_numbers_typed() {
    let env = TestEnv::with_roster(TZ, 30, 2);
    let d1 = env.members("D001");
    env.punch(&d1[0], "in", "2026-11-20T08:50:00", false);
    env.punch(&d1[0], "out", "2026-11-20T17:05:00", false);
    env.punch(&d1[0], "in", "2026-11-19T09:40:00", false);
    env.ok(&["settle", "--date", DAY]);
    env.ok(&["settle", "--date", "2026-11-19"]);

    let range = ["--from", "2026-11-01", "--to", "2026-11-30"];
    let mut args = vec!["report", "employee", d1[0].as_str()];
    args.extend(range);
    let sheet = workbook_matches_csv(&env, &args, &format!("employee {}", d1[0]));
    assert_eq!(sheet.len(), 4, "header, two days, totals");
    assert!(matches!(sheet[1][0], Data::DateTime(_)), "a date: {:?}", sheet[1][0]);
    assert!(matches!(sheet[2][3], Data::DateTime(_)), "a time: {:?}", sheet[2][3]);
    assert_eq!(sheet[3][0], Data::String("total".into()));
    assert_eq!(sheet[3][5], Data::Float(40.0), "late minutes summed, as a number");
    assert_eq!(sheet[3][6], Data::Float(55.0), "early minutes summed, as a number");

    let mut args = vec!["report", "dept", "D001"];
    args.extend(range);
    let dept = workbook_matches_csv(&env, &args, "dept D001");
    assert_eq!(dept.len(), d1.len() + 2, "header, one row per employee, totals");
    assert_eq!(dept.last().unwrap()[2], Data::Float((2 * d1.len()) as f64));
    let csv_file = env.dir.join("runs.csv");
    let csv = env.ok(&["report", "runs", "--format", "csv"]);
    env.ok(&["report", "runs", "--format", "csv", "-o", csv_file.to_str().unwrap()]);
    assert_eq!(
        std::fs::read_to_string(&csv_file).unwrap(),
        csv,
        "-o writes what stdout shows"
    );
    let runs = workbook_matches_csv(&env, &["report", "runs"], "settle runs");
    assert!(matches!(runs[1][2], Data::DateTime(_)), "started: {:?}", runs[1][2]);

    // Piped, the workbook goes to stdout; on a terminal it is refused, and nothing is written.
    let o = env.run(&["report", "dept", "D001", "--format", "xlsx"]);
    assert!(o.status.success());
    assert_eq!(&o.stdout[..2], b"PK", "a zip archive");
    let bin = assert_cmd::cargo::cargo_bin("attendance");
    let tty = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} report dept D001 --format xlsx", bin.display()),
            "/dev/null",
        ])
        .envs(env.std_cmd().get_envs().filter_map(|(k, v)| Some((k, v?))))
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&tty.stdout);
    assert!(
        shown.contains("error: --format xlsx writes a binary workbook"),
        "{shown}"
    );
    assert_eq!(tty.status.code(), Some(2), "{shown}");
}

/// A textfile's samples: `name{labels}` -> value.
/// The file's samples, once its names and types pass `promtool check metrics` (where installed).
fn samples(path: &Path) -> BTreeMap<String, f64> {
    let text = std::fs::read_to_string(path).unwrap();
    super::metrics::promtool(&text);
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.rsplit_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

fn fresh(m: &BTreeMap<String, f64>, name: &str) {
    let at = m[name];
    assert!((Utc::now().timestamp() as f64 - at).abs() < 120.0, "{name} = {at}");
}

#[test]
fn settle_and_relay_leave_their_figures_in_a_metrics_file() {
    let env = TestEnv::with_roster(TZ, 12, 2);
    let prom = env.dir.join("settle.prom");
    let p = prom.to_str().unwrap();
    // A punch while the broker is unreachable: the event waits in the outbox.
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args([
            "checkin",
            "E000002",
            "--kind",
            "in",
            "--at",
            "2026-11-20T09:30:00+01:00",
        ])
        .assert()
        .success();
    let waiting = || -> usize { env.redis_keys().iter().filter(|k| k.contains(":outbox:")).count() };
    assert_eq!(waiting(), 1);

    // A board field written by hand, with no signed record behind it: settle refuses it.
    let forger = env.members("D001").into_iter().find(|e| e != "E000002").unwrap();
    let _: () = redis::Commands::hset(
        &mut env.redis(),
        env.keys().board("D001", common::date(DAY)),
        &forger,
        "i30000",
    )
    .unwrap();
    env.ok(&["settle", "--date", DAY, "--metrics-file", p]);
    let m = samples(&prom);
    fresh(&m, "attendance_settle_last_run_timestamp_seconds");
    assert_eq!(m["attendance_settle_refused_punches"], 1.0, "{m:?}");
    assert_eq!(m["attendance_settle_outcome{outcome=\"ok\"}"], 1.0);
    assert_eq!(m["attendance_settle_outcome{outcome=\"error\"}"], 0.0);
    assert_eq!(m["attendance_settle_rows_written"], 12.0);
    assert_eq!(m["attendance_settle_rows{status=\"missing_checkout\"}"], 1.0, "{m:?}");
    assert_eq!(
        m["attendance_settle_rows{status=\"present\"}"], 0.0,
        "every status, zeros too"
    );
    assert_eq!(
        m["attendance_settle_rows{status=\"absent\"}"],
        env.count("attendance WHERE status = 'absent'") as f64
    );
    assert_eq!(m["attendance_settle_failed_rows"], 0.0);
    assert!(m["attendance_settle_duration_seconds"] > 0.0);

    // Settle drained the outbox on the real broker; a new event is stranded.
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(["checkin", "E000003", "--kind", "in"])
        .assert()
        .success();
    assert_eq!(waiting(), 1);
    // A run that stops early still writes every series: outcome error, the counts unknown
    // (NaN: an old night's figures never look current), the pending events read from Redis.
    env.fails(&["settle", "--date", "2099-01-01", "--metrics-file", p], 1);
    let m = samples(&prom);
    assert_eq!(m["attendance_settle_outcome{outcome=\"error\"}"], 1.0);
    assert!(m["attendance_settle_rows_written"].is_nan(), "{m:?}");
    assert!(m["attendance_settle_refused_punches"].is_nan(), "{m:?}");
    assert!(m["attendance_settle_rows{status=\"absent\"}"].is_nan(), "{m:?}");
    assert_eq!(m["attendance_settle_events_pending"], 1.0, "{m:?}");

    // Regression: with the broker unreachable, relay wrote no events_pending, so the documented
    // alert (pending > 0 and success == 0) could not fire in exactly that case.
    let relay_prom = env.dir.join("relay.prom");
    let r = relay_prom.to_str().unwrap();
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(["relay", "--metrics-file", r])
        .assert()
        .code(3);
    let m = samples(&relay_prom);
    assert_eq!(
        (m["attendance_relay_success"], m["attendance_relay_events_pending"]),
        (0.0, 1.0)
    );
    assert_eq!(m["attendance_relay_departments"], 1.0);
    let text = std::fs::read_to_string(&relay_prom).unwrap();
    assert!(
        text.contains("# TYPE attendance_relay_events_sent_total counter\n"),
        "a count that only grows is a counter: {text}"
    );
    env.ok(&["relay", "--metrics-file", r]);
    let m = samples(&relay_prom);
    fresh(&m, "attendance_relay_last_run_timestamp_seconds");
    assert_eq!(m["attendance_relay_success"], 1.0);
    assert_eq!(m["attendance_relay_events_sent_total"], 1.0);
    assert_eq!(m["attendance_relay_events_pending"], 0.0);
    assert_eq!(waiting(), 0, "the outbox is empty in Redis");
    let leftovers: Vec<_> = std::fs::read_dir(&env.dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary file left");
}

#[test]
fn relay_follow_rewrites_its_metrics_every_round_until_sigterm() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let prom = env.dir.join("relay.prom");
    let mut child = env
        .std_cmd()
        .args([
            "relay",
            "--follow",
            "--interval-ms",
            "100",
            "--metrics-file",
            prom.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let first = wait_for(|| prom.exists().then(|| samples(&prom)));
    assert_eq!(first["attendance_relay_success"], 1.0);
    assert_eq!(first["attendance_relay_events_sent_total"], 0.0);
    // A stranded event is sent by the running relay, and the file says so.
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        // Stranded, not handed to the live relay.
        .env("ATTENDANCE_AMQP_HANDOFF", "false")
        .args(["checkin", "E000002", "--kind", "in"])
        .assert()
        .success();
    let later = wait_for(|| Some(samples(&prom)).filter(|m| m["attendance_relay_events_sent_total"] == 1.0));
    assert_eq!(later["attendance_relay_events_pending"], 0.0);
    assert!(
        later["attendance_relay_last_run_timestamp_seconds"] >= first["attendance_relay_last_run_timestamp_seconds"]
    );
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(child.wait().unwrap().success(), "SIGTERM ends the relay cleanly");
}

#[test]
fn relay_follow_without_a_broker_writes_the_events_pending_read_from_redis() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    let closed = common::CLOSED_BROKER;
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", closed)
        .args(["checkin", "E000002", "--kind", "in"])
        .assert()
        .success();
    let prom = env.dir.join("relay.prom");
    let mut child = env
        .std_cmd()
        .env("ATTENDANCE_AMQP_URL", closed)
        .args(["relay", "--follow", "--metrics-file", prom.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let m = wait_for(|| prom.exists().then(|| samples(&prom)));
    assert_eq!(
        (m["attendance_relay_success"], m["attendance_relay_events_pending"]),
        (0.0, 1.0),
        "{m:?}"
    );
    // SAFETY: a plain kill(2) of our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    child.wait().unwrap();
}

/// Poll until `f` gives a value, for at most 15 s.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "timed out");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// The `name(1)` pages a roff page refers to, its font escapes taken out.
fn page_references(roff: &str) -> Vec<String> {
    let plain = roff
        .replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\fI", "")
        .replace("\\-", "-");
    plain
        .match_indices("(1)")
        .map(|(at, _)| {
            let head = &plain[..at];
            let start = head
                .rfind(|c: char| !(c.is_ascii_lowercase() || c == '-'))
                .map_or(0, |i| i + 1);
            head[start..].to_string()
        })
        .filter(|name| !name.is_empty())
        .collect()
}

#[test]
fn man_pages_say_environment_files_and_exit_status_and_name_only_pages_that_exist() {
    // Regression: no ENVIRONMENT, FILES or EXIT STATUS; the main page named attendance-help(1),
    // which does not exist, and the pages pointed to docs/configuration.md, which is not installed.
    let env = TestEnv::new("UTC");
    let dir = env.dir.join("man1");
    env.ok(&["man", "--dir", dir.to_str().unwrap()]);
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert!(pages.len() > 40, "{pages:?}");
    let main = std::fs::read_to_string(dir.join("attendance.1")).unwrap();
    assert_eq!(main, env.ok(&["man"]), "the page on stdout is the one written");
    for section in [
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH \"EXIT STATUS\"",
        ".SH \"SEE ALSO\"",
    ] {
        assert!(main.contains(section), "{section} in {main}");
    }
    // Every setting's variable, from the key table.
    for var in [
        "ATTENDANCE_CONFIG",
        "ATTENDANCE_SETTLE_BATCH_SIZE",
        "ATTENDANCE_SIGNING_KEYRING_FILE",
    ] {
        assert!(main.contains(var), "{var}");
    }
    assert!(main.contains("/etc/attendance/config.toml"), "FILES");
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(
            text.contains(".SH \"EXIT STATUS\"") && text.contains(".SH ENVIRONMENT"),
            "{page}"
        );
        assert!(!text.contains("docs/"), "{page} points at a file that is not installed");
        for name in page_references(&text) {
            assert!(
                pages.contains(&format!("{name}.1")),
                "{page} names {name}(1), which is not there"
            );
        }
    }
    assert!(
        page_references(&std::fs::read_to_string(dir.join("attendance-report-day.1")).unwrap())
            .contains(&"attendance-report".to_string())
    );
}

#[test]
fn completions_and_man_pages_come_from_the_clap_definitions() {
    let env = TestEnv::new("UTC");
    let bash = env.ok(&["completions", "bash"]);
    assert!(bash.contains("doctor") && bash.contains("--metrics-file"), "bash");
    assert!(env.ok(&["completions", "zsh"]).contains("#compdef attendance"));
    assert!(env.ok(&["completions", "fish"]).contains("complete -c attendance"));
    env.fails(&["completions", "tcsh"], 2);
    let man = env.ok(&["man"]);
    assert!(man.starts_with(".ie") || man.contains(".TH attendance"), "roff");
    assert!(man.contains("doctor"));
    // Neither needs a readable config: an install script must not trip on one.
    let o = env
        .cmd()
        .env("ATTENDANCE_CONFIG", "/nonexistent.toml")
        .args(["completions", "bash"])
        .output()
        .unwrap();
    assert!(o.status.success());
}

#[test]
fn the_install_script_lays_out_binary_completions_man_pages_and_units_that_verify() {
    let env = TestEnv::new("UTC");
    let prefix = env.dir.join("prefix");
    let units = env.dir.join("units");
    let bin = assert_cmd::cargo::cargo_bin("attendance");
    let o = std::process::Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/install.sh"))
        .args(["--prefix", prefix.to_str().unwrap(), "--bin", bin.to_str().unwrap()])
        .args(["--units", units.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "bin/attendance",
        "share/bash-completion/completions/attendance",
        "share/zsh/site-functions/_attendance",
        "share/fish/vendor_completions.d/attendance.fish",
        "share/man/man1/attendance.1",
        "share/man/man1/attendance-settle.1",
        "share/man/man1/attendance-doctor.1",
    ] {
        let len = std::fs::metadata(prefix.join(f)).map(|m| m.len()).unwrap_or(0);
        assert!(len > 0, "{f} missing or empty");
    }
    // Every unit's ExecStart is a command line the installed binary accepts.
    for name in ["attendance-settle.service", "attendance-relay.service"] {
        let text = std::fs::read_to_string(units.join(name)).unwrap();
        let exec = text.lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap();
        let mut words = exec.split_whitespace();
        assert_eq!(words.next(), Some(prefix.join("bin/attendance").to_str().unwrap()));
        let args: Vec<&str> = words.chain(["--help"]).collect();
        env.ok(&args);
    }
    let timer = std::fs::read_to_string(units.join("attendance-settle.timer")).unwrap();
    assert!(timer.contains("\nUnit=attendance-settle.service\n") && timer.contains("OnCalendar="));
    // Where systemd's tools are installed, they must accept the units as installed.
    if let Ok(o) = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .args(
            [
                "attendance-settle.service",
                "attendance-settle.timer",
                "attendance-relay.service",
            ]
            .map(|u| units.join(u)),
        )
        .env("MANPATH", prefix.join("share/man"))
        .output()
    {
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && said.trim().is_empty(),
            "systemd-analyze verify: {said}"
        );
    }
}

#[test]
fn queues_purge_empties_every_department_queue_of_the_namespace() {
    let env = TestEnv::with_roster("UTC", 20, 3);
    env.ok(&["queues", "declare"]);
    for e in ["E000002", "E000003", "E000004", "E000005"] {
        env.ok(&["checkin", e]);
    }
    let before = broker_state(&env);
    assert_eq!((before.declared, before.messages), (3, 4));
    // Without --yes: one line, exit 2, every message still there.
    let err = env.fails(&["queues", "purge"], 2);
    assert!(err.contains("add --yes") && err.trim().lines().count() == 1, "{err}");
    assert_eq!(broker_state(&env).messages, 4);
    let out = env.json(&["queues", "purge", "--yes", "--json"]);
    assert_eq!(out["messages"], 4);
    assert_eq!(out["queues"], 5, "three departments, retry and parking");
    let after = broker_state(&env);
    assert_eq!((after.declared, after.messages), (3, 0), "queues kept, empty");
}

#[test]
fn queues_delete_removes_the_namespace_queues_only_when_told_yes() {
    let env = TestEnv::with_roster("UTC", 20, 3);
    env.ok(&["queues", "declare"]);
    env.ok(&["checkin", "E000002"]);
    // Without --yes: a one-line usage error, and nothing is gone.
    let err = env.fails(&["queues", "delete"], 2);
    assert!(err.contains("--yes") && err.lines().count() == 1, "{err}");
    assert_eq!(broker_state(&env).declared, 3);
    let out = env.json(&["queues", "delete", "--yes", "--json"]);
    assert_eq!(out["deleted"], 6, "three departments, retry, parking, journal");
    assert_eq!(queues_of(&env).0, 0, "every department queue gone");
    for common in ["retry", "parking", "journal"] {
        assert!(!queue_exists(&format!("{}.{common}", env.ns)), "{common} gone");
    }
    // The next check-in declares what it needs again.
    env.ok(&["checkin", "E000003"]);
    assert!(queues_of(&env).0 >= 1);
}

/// Whether the broker has this queue (a passive declare answers).
fn queue_exists(name: &str) -> bool {
    let mut conn = amiquip::Connection::insecure_open(common::AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    let found = ch.queue_declare_passive(name).is_ok();
    conn.close().ok();
    found
}

/// What the broker holds for the roster's departments.
fn broker_state(env: &TestEnv) -> attendance::BrokerState {
    let cfg = attendance::Config {
        amqp_url: common::AMQP_URL.to_string(),
        namespace: env.ns.clone(),
        ..Default::default()
    };
    let depts: Vec<String> = env.mysql().query("SELECT id FROM departments ORDER BY id").unwrap();
    attendance::broker_state(&cfg, &depts).unwrap()
}

/// (declared, missing) department queues of the roster's departments, as the broker has them.
fn queues_of(env: &TestEnv) -> (usize, Vec<String>) {
    let state = broker_state(env);
    (state.declared, state.missing)
}

fn delete_queue(name: &str) {
    let mut conn = amiquip::Connection::insecure_open(common::AMQP_URL).unwrap();
    let ch = conn.open_channel(None).unwrap();
    ch.queue_delete(name, amiquip::QueueDeleteOptions::default()).unwrap();
    conn.close().ok();
}

#[test]
fn org_import_and_init_day_declare_the_department_queues_ahead_of_the_first_checkin() {
    let env = TestEnv::with_roster("UTC", 20, 3);
    assert_eq!(
        queues_of(&env),
        (3, vec![]),
        "org import declared its new departments' queues"
    );
    // A fresh broker (the queues gone): init-day declares them again.
    env.bare_broker();
    assert_eq!(queues_of(&env).0, 0);
    env.init_day(DAY, &[]);
    assert_eq!(queues_of(&env), (3, vec![]));
    // A later import declares the departments it brings, and only those.
    delete_queue(&format!("{}.dept.D001", env.ns));
    let more = env.file(
        "more.csv",
        "employee_id,name,department_id,department_name,role\nE009001,Ada Byron,D004,Research,employee\n",
    );
    env.ok(&["org", "import", more.to_str().unwrap()]);
    assert_eq!(queues_of(&env), (3, vec!["D001".to_string()]));
}

#[test]
fn init_day_declares_again_a_department_queue_deleted_by_hand_and_only_looks_up_the_others() {
    let env = TestEnv::with_day("UTC", Day::new(20, 3).init_day(DAY, &[]));
    delete_queue(&format!("{}.dept.D002", env.ns));
    delete_queue(&format!("{}.parking", env.ns));
    assert_eq!(queues_of(&env), (2, vec!["D002".to_string()]));
    let out = env.run(&["init-day", "--date", "2026-11-03", "-v"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("queues looked up on the broker, 1 missing ones declared"),
        "{err}"
    );
    assert_eq!(queues_of(&env), (3, vec![]));
    assert!(broker_state(&env).parked.is_some(), "the parking queue is back too");
}

#[test]
fn init_day_and_org_import_with_the_broker_down_do_their_work_and_say_the_queues_wait() {
    let env = TestEnv::migrated("UTC");
    let roster = env.roster_file(10, 2);
    let closed = format!(
        "amqp://guest:hunter2@127.0.0.1:{}/%2f",
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    );
    for (args, what) in [
        (vec!["org", "import", roster.to_str().unwrap()], "org import"),
        (vec!["init-day", "--date", DAY], "init-day"),
    ] {
        let o = env
            .cmd()
            .args(&args)
            .env("ATTENDANCE_AMQP_URL", &closed)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(
            err.contains(&format!("{what}: warning: the department queues were not declared"))
                && err.contains("attendance queues declare")
                && !err.contains("hunter2"),
            "{err}"
        );
    }
    assert_eq!(env.count("employees"), 10);
    assert_eq!(env.board_keys(DAY).len(), 2, "the boards are laid out");
    assert_eq!(queues_of(&env), (0, vec!["D001".to_string(), "D002".to_string()]));
}

//! `checkin --file` on a pipe, a FIFO or stdin: punches land as they arrive (a kiosk keeps the
//! pipe open all day), the summary comes at EOF or on SIGTERM; and a file of many bad rows
//! prints the first 20 refusals and a count, every one going to `--errors FILE`.

use crate::common;
use std::io::Write;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::day::Day;
use common::private_redis::PrivateRedis;
use common::TestEnv;
use redis::Commands;

const DAY: &str = "2026-11-02";

/// Poll `f` for up to five seconds; whether it became true.
fn within_seconds(mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// The child's output once it exits (killed after 20 s so a hang fails instead of blocking).
fn finish(mut child: Child) -> Output {
    let until = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            child.kill().unwrap();
            panic!("checkin --file did not end");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// `checkin --file -` with E000002's check-in written into its stdin, which stays open.
fn stream_one_punch(env: &TestEnv) -> (Child, std::process::ChildStdin) {
    let mut child = env
        .std_cmd()
        .args(["checkin", "--file", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "employee_id,kind,at\nE000002,in,{DAY}T08:00:00Z").unwrap();
    stdin.flush().unwrap();
    (child, stdin)
}

#[test]
fn a_punch_written_into_a_fifo_is_on_the_board_before_the_pipe_closes() {
    // Regression: a FIFO was read to its end before anything was recorded (6 s late).
    let env = TestEnv::with_roster("UTC", 5, 1);
    let fifo = env.dir.join("kiosk.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let child = env
        .std_cmd()
        .args(["checkin", "--file", fifo.to_str().unwrap(), "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Opening for writing waits for the reader: the binary has opened the FIFO.
    let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writeln!(pipe, "employee_id,kind,at,source\nE000002,in,{DAY}T08:00:00Z,kiosk").unwrap();
    pipe.flush().unwrap();
    let landed = within_seconds(|| env.board("D001", DAY).contains_key("E000002"));
    assert!(landed, "the first punch is on the board while the pipe is still open");
    assert!(!env.board("D001", DAY).contains_key("E000003"));

    writeln!(
        pipe,
        "E000003,in,{DAY}T08:05:00Z,kiosk\nNOBODY,in,{DAY}T08:06:00Z,kiosk"
    )
    .unwrap();
    drop(pipe);
    let o = finish(child);
    assert_eq!(o.status.code(), Some(4), "{}", String::from_utf8_lossy(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["rows"], 3, "{report}");
    assert_eq!(report["recorded"], 2, "{report}");
    assert_eq!(report["refused_count"], 1, "{report}");
    assert_eq!(report["refused"][0]["line"], 4, "{report}");
    assert_eq!(report["notifications"]["sent"], 2, "{report}");
    assert_eq!(report["notifications"]["pending"], 0, "{report}");
    let board = env.board("D001", DAY);
    assert_eq!(board["E000002"], "i28800");
    assert_eq!(board["E000003"], "i29100");
    assert_eq!(env.outbox_events(), 0);
}

#[test]
fn sigterm_mid_stream_prints_the_summary_of_what_was_recorded_and_exits_0() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let (child, stdin) = stream_one_punch(&env);
    assert!(within_seconds(|| env.board("D001", DAY).contains_key("E000002")));
    // SAFETY: a plain kill(2) of our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let o = finish(child);
    drop(stdin);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("1 rows: 1 recorded, 0 unchanged (0 repeats), 0 refused"),
        "{out}"
    );
    assert!(out.contains("notifications: 1 sent, 0 pending"), "{out}");
    assert!(err.contains("stopped by a signal"), "{err}");
}

#[test]
fn a_stream_whose_redis_dies_between_two_punches_summarises_the_first_and_exits_3() {
    let dir = std::env::temp_dir().join(format!("att-stream-{}", uuid::Uuid::new_v4().simple()));
    let mut redis = PrivateRedis::start_in(dir, false);
    let env = TestEnv::on_redis("UTC", &redis.url());
    env.day(Day::new(5, 1).import_flags(&["-q"]));
    let board = env.keys().board("D001", common::date(DAY));
    let (child, mut stdin) = stream_one_punch(&env);
    // The first batch recorded and its event published (gone from the outbox); then a moment
    // for the batch to finish its outbox drain, so that Redis dies between two batches.
    let outbox = env.keys().outbox("D001");
    assert!(within_seconds(|| redis.con().is_ok_and(|mut c| {
        c.hexists(&board, "E000002").unwrap_or(false) && c.hlen::<_, usize>(&outbox).unwrap_or(1) == 0
    })));
    std::thread::sleep(Duration::from_millis(500));
    redis.crash();
    writeln!(stdin, "E000003,in,{DAY}T08:00:00Z").unwrap();
    drop(stdin);
    let o = finish(child);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(3), "{out}{err}");
    assert!(
        out.contains("1 rows: 1 recorded"),
        "the first batch is summarised: {out}{err}"
    );
    let last = err.lines().last().unwrap();
    assert!(last.contains("the 1 rows before this batch were applied"), "{err}");
    assert!(last.contains("Redis"), "{err}");
}

#[test]
fn a_stream_cut_by_an_overlong_line_keeps_the_rows_before_it_and_says_so() {
    let env = TestEnv::with_roster("UTC", 5, 1);
    let long = "x".repeat(70 * 1024);
    let input = format!("employee_id,kind,at\nE000002,in,{DAY}T08:00:00Z\n{long}\nE000003,in,{DAY}T08:00:00Z\n");
    let o = env
        .cmd()
        .args(["checkin", "--file", "-"])
        .write_stdin(input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("line 3 is longer than 64 KiB"), "{err}");
    assert!(err.contains("the 1 rows before it were applied"), "{err}");
    let board = env.board("D001", DAY);
    assert!(
        board.contains_key("E000002") && !board.contains_key("E000003"),
        "{board:?}"
    );
}

#[test]
fn a_hundred_thousand_bad_rows_print_twenty_and_a_count_and_every_one_goes_to_errors() {
    // Regression: each refusal was a line on stderr (104 MB for 100,000 bad rows).
    let env = TestEnv::with_roster("UTC", 5, 1);
    let mut rows = String::from("employee_id,kind,at\n");
    for i in 0..100_000 {
        rows.push_str(&format!("bad id {i},in,{DAY}T08:00:00Z\n"));
    }
    let f = env.file("bad.csv", &rows);
    let errors = env.dir.join("errors.csv");
    let before = env.redis_snapshot();
    let o = env.run(&[
        "checkin",
        "--file",
        f.to_str().unwrap(),
        "--errors",
        errors.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.len() < 4096, "stderr stays small: {} bytes", err.len());
    assert_eq!(err.matches("refused line ").count(), 20, "{err}");
    assert!(err.contains("and 99980 more refused rows"), "{err}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("100000 rows: 0 recorded, 0 unchanged (0 repeats), 100000 refused")
    );
    let written = std::fs::read_to_string(&errors).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 100_001);
    assert_eq!(lines[0], "line,reason");
    assert_eq!(lines[1], "2,invalid employee_id 'bad id 0'");
    assert_eq!(lines[100_000], "100001,invalid employee_id 'bad id 99999'");
    assert_eq!(env.redis_snapshot(), before, "nothing recorded");

    // --json lists the first 20 and counts them all.
    let o = env.run(&["checkin", "--file", f.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(o.stderr.len() < 4096, "{}", o.stderr.len());
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["refused"].as_array().unwrap().len(), 20);
    assert_eq!(report["refused_count"], 100_000);
}

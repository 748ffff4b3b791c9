//! `watch-dept`'s live screen, a supervisor's screen that tells the truth: the real
//! binary in a pseudo-terminal against the real services, its screen read by a terminal
//! emulator. Today's board first, another day's punch marked with its date, ids never cut
//! across lines, a void notice, a window resize redrawn to the new size, filter keys and the
//! whole not-yet-in list scrolled, and q / Esc / Ctrl-C leaving the terminal as the shell had it.

use crate::common;

use std::time::Duration;

use common::day::Day;
use common::pty::Pty;
use common::TestEnv;

/// 60 employees in D001, every day a work day, today laid out (UTC).
fn company() -> (TestEnv, Vec<String>) {
    let env = TestEnv::new("UTC");
    env.day(Day::new(60, 1).import_flags(&["-q"]));
    env.policy("policy.work_days", "mon,tue,wed,thu,fri,sat,sun", "2000-01-01");
    env.init_day(&env.today().to_string(), &["-q"]);
    let members = env.members("D001");
    assert_eq!(members.len(), 60);
    (env, members)
}

fn watch(env: &TestEnv, rows: u16, cols: u16) -> Pty {
    let mut c = env.std_cmd();
    c.args(["watch-dept", "D001"]);
    Pty::spawn(c, rows, cols)
}

fn has(rows: &[String], needle: &str) -> bool {
    rows.iter().any(|r| r.contains(needle))
}

/// The board is on the screen, its counts read.
fn board(pty: &Pty, not_in: usize) -> Vec<String> {
    pty.wait_for("the board", |r| {
        r[0].starts_with("Department D001 |") && has(r, &format!("| not yet in {not_in} |"))
    })
}

/// The people on the first row under the "Not yet in" heading (cells are two spaces apart).
/// (0 while the heading is not on the screen: a wait reads the screen mid-way through a frame.)
fn first_row_of_not_in(rows: &[String]) -> usize {
    let Some(at) = rows.iter().position(|r| r.starts_with("Not yet in (")) else {
        return 0;
    };
    rows.get(at + 1)
        .map_or(0, |r| r.split("  ").filter(|c| !c.trim().is_empty()).count())
}

/// Every employee id on the screen is whole: an id cut across lines would leave a shorter
/// "E..." token at a line's end or a line starting with digits.
fn ids_whole(rows: &[String], id_len: usize) -> bool {
    rows.iter().all(|r| {
        r.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|t| t.len() > 1 && t.starts_with('E') && t[1..].chars().all(|c| c.is_ascii_digit()))
            .all(|t| t.len() == id_len)
    })
}

/// The company on an 80 x 24 screen, its first employee checking in once the board is up.
fn watching_as_the_first_checks_in() -> (TestEnv, Vec<String>, Pty) {
    let (env, m) = company();
    let pty = watch(&env, 24, 80);
    board(&pty, 60);
    env.ok(&["checkin", &m[0], "--kind", "in", "-q"]);
    (env, m, pty)
}

#[test]
fn check_ins_arrive_on_the_screen_another_days_punch_is_dated_and_a_resize_redraws() {
    let (env, m, mut pty) = watching_as_the_first_checks_in();
    env.ok(&["checkin", &m[1], "--kind", "in", "-q"]);
    let yesterday = env.today().pred_opt().unwrap();
    env.ok(&[
        "checkin",
        &m[2],
        "--kind",
        "out",
        "--at",
        &format!("{yesterday}T18:05"),
        "-q",
    ]);
    let rows = pty.wait_for("the check-ins and yesterday's check-out", |r| {
        has(r, "| not yet in 58 |")
            && has(r, &format!("D001 {} ", m[1]))
            && has(r, &format!("({yesterday}) 18:05:00 D001 {} ", m[2]))
    });
    assert!(rows[1].starts_with("in 2 (late "), "{rows:#?}");
    let today_line = rows.iter().find(|r| r.contains(&format!("D001 {} ", m[0]))).unwrap();
    assert!(!today_line.starts_with('('), "today's event is not dated: {today_line}");
    assert!(
        has(&rows, "Board, all | rows 1-"),
        "the list is longer than the screen: {rows:#?}"
    );
    assert!(ids_whole(&rows, m[0].len()), "{rows:#?}");
    let at_80 = first_row_of_not_in(&rows);
    assert!(at_80 >= 2, "{rows:#?}");

    // The supervisor voids one of today's check-ins: the notice is listed, the board follows.
    let (_, sup) = env.member_and_supervisor();
    let voided = [&m[0], &m[1]].into_iter().find(|e| **e != sup).unwrap();
    let first_in = env.json(&["status", voided, "--json"])["first_in"]
        .as_str()
        .unwrap()
        .to_string();
    env.act_as(&sup);
    env.ok(&[
        "punch",
        "void",
        voided,
        "--at",
        &first_in,
        "--reason",
        "lent badge",
        "-q",
    ]);
    let rows = pty.wait_for("the void notice", |r| {
        has(r, &format!("void: {voided} ")) && has(r, "| not yet in 59 |")
    });
    assert!(rows[1].starts_with("in 1 (late "), "{rows:#?}");
    assert!(
        has(&rows, &format!("check-in voided by {sup} (lent badge)")),
        "{rows:#?}"
    );

    pty.resize(30, 120);
    let rows = pty.wait_for("the screen at 120 x 30", |r| {
        r.len() == 30 && r[29].starts_with("q quit") && first_row_of_not_in(r) > at_80
    });
    assert!(ids_whole(&rows, m[0].len()), "{rows:#?}");
    pty.resize(16, 40);
    let rows = pty.wait_for("the screen at 40 x 16", |r| {
        r.len() == 16 && r[15].starts_with("q quit") && (1..at_80).contains(&first_row_of_not_in(r))
    });
    assert!(ids_whole(&rows, m[0].len()), "{rows:#?}");
    assert!(rows[0].starts_with("Department D001 |"), "{rows:#?}");
    pty.send(b"q");
    assert!(pty.wait_exit(Duration::from_secs(10)).success());
    // Shown means acked: nothing is left in the department's queue.
    assert_eq!(common::queue_depth(&format!("{}.dept.D001", env.ns)), 0);
}

#[test]
fn filter_keys_scroll_the_whole_not_yet_in_list_and_q_gives_the_terminal_back() {
    let (env, m, mut pty) = watching_as_the_first_checks_in();
    board(&pty, 59);
    pty.send(b"n");
    let rows = pty.wait_for("the not-yet-in filter", |r| {
        r[0].ends_with("| filter: not yet in") && has(r, "Board, not yet in | rows 1-")
    });
    assert!(!has(&rows, "Late (") && !has(&rows, "Out ("), "{rows:#?}");
    assert!(has(&rows, &format!("{} ", m[1])), "{rows:#?}");
    assert!(
        !has(&rows, &format!("{} ", m[59])),
        "the last one is further down: {rows:#?}"
    );
    pty.send(b"\x1b[6~"); // PgDn
    pty.wait_for("a page down", |r| {
        !has(r, "| rows 1-") && has(r, "Board, not yet in | rows ")
    });
    pty.send(b"G");
    let rows = pty.wait_for("the end of the list", |r| has(r, &format!("{} ", m[59])));
    assert!(!has(&rows, &format!("{} ", m[1])), "{rows:#?}");
    pty.send(b"k");
    pty.send(b"o");
    let rows = pty.wait_for("the out filter", |r| r[0].ends_with("| filter: out"));
    assert!(has(&rows, "Out (0)") && has(&rows, "  none"), "{rows:#?}");
    pty.send(b"l");
    let rows = pty.wait_for("the late filter", |r| r[0].ends_with("| filter: late"));
    assert!(!has(&rows, "Not yet in ("), "{rows:#?}");

    pty.send(b"q");
    assert!(pty.wait_exit(Duration::from_secs(10)).success());
    assert_eq!(
        pty.alternate_and_hidden(),
        (false, false),
        "the main screen and the cursor are back"
    );
    assert!(pty.cooked(), "the terminal is out of raw mode");
    let rows = pty.rows();
    assert!(
        has(&rows, "watch-dept: 1 events shown"),
        "the last word, after the screen: {rows:#?}"
    );
    assert_eq!(common::queue_depth(&format!("{}.dept.D001", env.ns)), 0);
}

#[test]
fn esc_and_ctrl_c_also_leave_and_restore_the_terminal() {
    let (env, _) = company();
    for (key, name) in [(&b"\x1b"[..], "Esc"), (&b"\x03"[..], "Ctrl-C")] {
        let mut pty = watch(&env, 24, 80);
        board(&pty, 60);
        pty.send(key);
        assert!(pty.wait_exit(Duration::from_secs(10)).success(), "{name}");
        assert_eq!(pty.alternate_and_hidden(), (false, false), "{name}");
        assert!(pty.cooked(), "{name}");
    }
}

#[test]
fn a_failure_after_the_screen_opened_gives_the_terminal_back_and_says_why_in_one_line() {
    let (env, _) = company();
    // Redis answers (the screen opens), the broker does not: exit 3, as piped.
    let mut c = env.std_cmd();
    c.args(["watch-dept", "D001"])
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER);
    let mut pty = Pty::spawn(c, 24, 80);
    assert_eq!(pty.wait_exit(Duration::from_secs(20)).code(), Some(3));
    assert_eq!(pty.alternate_and_hidden(), (false, false));
    assert!(pty.cooked());
    let rows = pty.rows();
    let errors: Vec<&String> = rows.iter().filter(|r| r.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{rows:#?}");
    assert!(errors[0].contains("RabbitMQ"), "{rows:#?}");
}

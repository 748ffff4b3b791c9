//! MySQL for years: reports on their own URL (a replica), the foreign keys V5 dropped and the
//! checks that replace them, monthly partitions, and archiving old days, through the binary
//! on the real MariaDB. The day both halves set up is here.

mod archive;
mod schema;

use crate::common;

use common::TestEnv;
use mysql::prelude::Queryable;

const TZ: &str = "Europe/Paris";
/// Two Fridays in two months, long past.
const OCT: &str = "2026-10-30";
const NOV: &str = "2026-11-20";

pub(super) fn supervisor(env: &TestEnv, dept: &str) -> String {
    env.mysql()
        .exec_first("SELECT employee_id FROM supervisors WHERE department_id = ?", (dept,))
        .unwrap()
        .unwrap()
}

/// Settle `day` with one employee of D001 in at 08:45 and no check-out, then correct the
/// check-out: a row, a correction and a run for the day. Returns the corrected employee.
pub(super) fn settle_and_correct(env: &TestEnv, day: &str) -> String {
    let sup = supervisor(env, "D001");
    let e = env.members("D001").into_iter().find(|x| *x != sup).unwrap();
    env.punch(&e, "in", &format!("{day}T08:45:00"), true);
    env.ok(&["settle", "--date", day]);
    env.correct_out(&e, day, &sup);
    e
}

/// Rows per table and day, to prove what changed and what did not.
pub(super) fn census(env: &TestEnv) -> Vec<(String, String, u64)> {
    env.mysql()
        .query(
            "SELECT 'attendance', CAST(work_date AS CHAR), COUNT(*) FROM attendance GROUP BY work_date \
             UNION ALL SELECT 'corrections', CAST(work_date AS CHAR), COUNT(*) FROM corrections GROUP BY work_date \
             UNION ALL SELECT 'punch_log', CAST(work_date AS CHAR), COUNT(*) FROM punch_log GROUP BY work_date \
             UNION ALL SELECT 'settle_runs', CAST(work_date AS CHAR), COUNT(*) FROM settle_runs GROUP BY work_date \
             ORDER BY 1, 2",
        )
        .unwrap()
}

/// The partitions of `attendance`: (name, rows by count).
pub(super) fn partitions(env: &TestEnv) -> Vec<(String, u64)> {
    let names: Vec<String> = env
        .mysql()
        .query(
            "SELECT PARTITION_NAME FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() \
             AND TABLE_NAME = 'attendance' AND PARTITION_NAME IS NOT NULL ORDER BY PARTITION_ORDINAL_POSITION",
        )
        .unwrap();
    names
        .into_iter()
        .map(|p| {
            let n: u64 = env
                .mysql()
                .query_first(format!("SELECT COUNT(*) FROM attendance PARTITION ({p})"))
                .unwrap()
                .unwrap();
            (p, n)
        })
        .collect()
}

//! Where the punch script's Redis time goes: the bench's "board alone" step (a morning of
//! check-ins, 100 per script call, no publish) run through variants of `redis/scripts/punch.lua`, each
//! without one of its steps. Each variant runs call by call, and each call's EVALSHA time as
//! Redis counted it (INFO commandstats, read before and after; no CONFIG RESETSTAT, which would
//! spoil other users' figures) is a sample: on a shared 2-core machine the 10th percentile is
//! the script's own cost, the median includes waits for the CPU. Beside it: the real pipelined
//! `punch_many` (as the bench times it) and `redis-benchmark -t hset` before and after.
//!
//! cargo build --release --examples && target/release/examples/board_breakdown [--employees N] [--departments N] [--rounds N]
//!
//! Redis only, namespace `breakdown` (its keys are deleted after each variant and at the end).
//! The variants' scripts stay in Redis's script cache: flushing it would fail other clients'
//! pipelines. A call during which another client's EVALSHA ran is not counted.

// A benchmark prints its figures to a terminal: println! is fine here (see clippy.toml).
#![allow(clippy::disallowed_macros)]

#[path = "common/args.rs"]
mod args;
#[path = "common/redis_refs.rs"]
mod redis_refs;

use std::time::Instant;

use anyhow::Result;
use attendance::Keys;
use attendance::{Config, Overrides};
use attendance::{Employee, Punch, PunchRules};
use rand::RngExt;
use redis_refs::{benchmark_target, delete_pattern, evalsha_stats, redis_benchmark};

/// A variant: its name and the edits (text of `punch.lua` -> replacement) that make it.
type Variant = (&'static str, &'static [(&'static str, &'static str)]);

/// The run's namespace: `breakdown`, or `--tag NAME` (so that two runs at once do not meet).
fn ns() -> &'static str {
    args::tag("breakdown")
}

const OUTBOX_HSET: &str = "if nevent > 0 and not replay then redis.call('HSET', outbox, unpack(events)) end";

/// The punch log's write (each new event's record, for settle's punch_log).
const PUNCH_LOG: &str = "if nevent > 0 then redis.call('HSET', plog, unpack(events)) end";

/// The outbox record's last field, the only part of it the script builds.
const RECORD_BUILD: &str = "events[nevent + 2] = prefix .. (kind == 'in' and 'i' or 'o') .. (changed and '1' or '0')";

/// A punch that does the bookkeeping of a first check-in (board value, outbox entry, reply)
/// and none of the rules: what the rules cost is the difference.
const STUB: &str = "
local function punch(emp, t, secs, kind, id, prefix)
  cur[emp] = 'i' .. secs
  dirty[emp] = true
  events[nevent + 1] = id
  events[nevent + 2] = prefix
  nevent = nevent + 2
  return 'in', 1, 0, t, -1
end
for i = 5, #ARGV, 5 do
";
const VARIANTS: &[Variant] = &[
    ("as is", &[]),
    (
        "without completing the outbox record",
        &[(RECORD_BUILD, "events[nevent + 2] = prefix")],
    ),
    ("without the outbox HSET", &[(OUTBOX_HSET, "")]),
    ("without the punch log HSET", &[(PUNCH_LOG, "")]),
    (
        "without the board HSET and SADD",
        &[
            ("hset_board(board, writes, nwrite)", "local _ = writes"),
            ("redis.call('SADD', days, ARGV[4])", ""),
        ],
    ),
    (
        "without the HMGET",
        &[("redis.call('HMGET', board, unpack(emps))", "{}")],
    ),
    ("without the reply (returns {})", &[("\nreturn out", "\nreturn {}")]),
    (
        "a reply of one value per punch, not three",
        &[(
            "  out[nout + 2] = nf\n  out[nout + 3] = nl\n  nout = nout + 3\n",
            "  nout = nout + 1\n",
        )],
    ),
    (
        "the per-punch rules cut to a stub",
        &[("\nfor i = 5, #ARGV, 5 do\n", STUB)],
    ),
    (
        "only the call and its ARGV (returns at once)",
        &[("local board, outbox", "do return {} end\nlocal board, outbox")],
    ),
];

fn main() -> Result<()> {
    let employees = args::arg("--employees", 100_000)?;
    let departments = args::arg("--departments", 500)?;
    let rounds = args::arg("--rounds", 3)?;
    if employees % (departments * 100) != 0 {
        anyhow::bail!("--employees must be a multiple of 100 per department (full script calls)");
    }
    let mut cfg = Config::load(&Overrides {
        namespace: Some(ns().into()),
        timezone: Some("Europe/Paris".into()),
        ..Default::default()
    })?;
    cfg.namespace = ns().into();
    let mut con = attendance::Redis::open(&cfg)?;
    let run = || -> Result<()> {
        let target = benchmark_target(&cfg);
        let before = redis_benchmark(&target, &[])?;
        let punches = morning(&cfg, employees, departments);
        let mut board = attendance::Board::open(&cfg)?;
        let (mut rates, mut building) = (Vec::new(), Vec::new());
        // Rounds interleave the variants, so a burst of another user's load hits them alike.
        let mut per_call: Vec<Vec<f64>> = vec![Vec::new(); VARIANTS.len()];
        for _ in 0..rounds {
            rates.push(throughput(&cfg, &mut board, &punches)?);
            building.push(build_time(&cfg, &punches));
            for (i, (_, edits)) in VARIANTS.iter().enumerate() {
                per_call[i].extend(variant(&cfg, board.redis(), &punches, edits)?);
            }
        }
        let after = redis_benchmark(&target, &[])?;
        delete_pattern(board.redis(), "myhash*")?;
        println!("# board alone, {employees} check-ins in {departments} departments, 100 per call");
        println!("punch_many (pipelined, as in bench), punches/s: {rates:.0?}");
        println!("building the calls' arguments in Rust, µs per punch: {building:.2?}");
        println!("reference: redis-benchmark -t hset, 50 clients: {before:.0}/s before, {after:.0}/s after\n");
        println!("| variant | EVALSHA µs per punch: p10, median | calls timed |");
        println!("| --- | --- | --- |");
        for ((name, _), v) in VARIANTS.iter().zip(&mut per_call) {
            print_line(name, v);
        }
        Ok(())
    };
    args::run_then_cleanup(run, || delete_pattern(&mut con, &format!("{}:*", ns())))
}

/// One check-in per employee, between 08:00 and 09:10 on a past day, in the company's zone.
fn morning(cfg: &Config, employees: u32, departments: u32) -> Vec<Punch> {
    let tz = cfg.timezone;
    let day = chrono::NaiveDate::from_ymd_opt(2026, 11, 26).expect("a date");
    let start = attendance::day_start(tz, day) + chrono::Duration::hours(8);
    let mut rng = rand::rng();
    (1..=employees)
        .map(|i| {
            let e = Employee {
                id: format!("E{i:06}"),
                department_id: format!("D{:03}", i % departments + 1),
                name: format!("Employee Number {i}"),
                employment: Default::default(),
            };
            let at = start + chrono::Duration::seconds(rng.random_range(0..4_200));
            Punch::new(e, None, at, &format!("kiosk-{}", i % 40), &cfg.policy, tz)
        })
        .collect()
}

/// The real bulk path (`Board::punch_many`, pipelined), as the bench's board-alone step.
fn throughput(cfg: &Config, board: &mut attendance::Board, punches: &[Punch]) -> Result<f64> {
    let rules = PunchRules::new(&cfg.policy, cfg.timezone);
    let t = Instant::now();
    board.punch_many(rules, punches, |_| {})?;
    let rate = punches.len() as f64 / t.elapsed().as_secs_f64();
    delete_pattern(board.redis(), &format!("{}:*", ns()))?;
    Ok(rate)
}

/// What the client spends building the script calls (the records, the arguments), µs per punch.
fn build_time(cfg: &Config, punches: &[Punch]) -> f64 {
    let rules = PunchRules::new(&cfg.policy, cfg.timezone);
    let script = redis::Script::new(attendance::PUNCH_SCRIPT);
    let t = Instant::now();
    let calls = attendance::punch_calls(&script, &Keys::new(ns()), rules, punches);
    let us = t.elapsed().as_secs_f64() * 1e6 / punches.len() as f64;
    drop(calls);
    us
}

/// Run the morning through one variant of the script, call by call, and return the EVALSHA
/// time Redis counted for each call, per punch (nothing if the edits do not apply). A call
/// during which another client's EVALSHA ran is left out: the counters are server-wide.
fn variant(cfg: &Config, con: &mut attendance::Redis, punches: &[Punch], edits: &[(&str, &str)]) -> Result<Vec<f64>> {
    let mut text = attendance::PUNCH_SCRIPT.to_string();
    for (from, to) in edits {
        if !text.contains(from) {
            return Ok(Vec::new());
        }
        text = text.replace(from, to);
    }
    let script = redis::Script::new(&text);
    let rules = PunchRules::new(&cfg.policy, cfg.timezone);
    script.prepare_invoke().load(con)?;
    let mut out = Vec::new();
    for call in attendance::punch_calls(&script, &Keys::new(ns()), rules, punches) {
        let (c0, u0) = evalsha_stats(con)?;
        let _: redis::Value = call.invoke(con)?;
        let (c1, u1) = evalsha_stats(con)?;
        if c1 == c0 + 1 {
            out.push((u1 - u0) / 100.0);
        }
    }
    delete_pattern(con, &format!("{}:*", ns()))?;
    Ok(out)
}

/// A variant's line: the 10th percentile and the median of its calls.
fn print_line(name: &str, v: &mut [f64]) {
    if v.is_empty() {
        println!("| {name} | n/a (not in this script) | |");
        return;
    }
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    println!("| {name} | {:.2}, {:.2} | {} |", at(0.1), at(0.5), v.len());
}

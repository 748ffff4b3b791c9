//! `doctor`: whether this installation can be trusted, one verdict per check. Each check reads
//! its store through that store's module (Redis: `board`, MySQL: `db`, AMQP: `notify`) and a
//! store that cannot be reached is itself a verdict, never an early return: the operator sees
//! every problem in one run. Nothing here prints.

mod backlog;
mod grants;
mod leaders;
mod nodes;
mod verdict;

use verdict::check;
pub(crate) use verdict::{Check, Level};

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;

use crate::amqp::inventory as queues;
use crate::amqp::management::{self, SPARE_HANDLES};
use crate::config::Config;
use crate::domain::day::clock::{self, Reading};
use crate::domain::people::accounts::Role;
use crate::domain::text::plural;
use crate::error::redact;
use crate::mysql::{runs, Conn};
use crate::ops::exit::one_line;
use crate::redis::board::Board;

/// A clock this far from a server's is worth a warning: the servers' clocks are the ones that
/// count (README "Where time comes from"), and a host this far off is drifting. Past
/// `policy.max_clock_skew_secs` it is a failure: the host's punches with --at are refused.
const CLOCK_WARN: Duration = Duration::from_secs(1);
/// How far back `doctor` looks for work days that were never settled.
const LOOKBACK_DAYS: i64 = 62;

/// Every verdict, in the order they were made.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report {
    /// The worst verdict of all, for scripts that want one word.
    pub status: Level,
    pub checks: Vec<Check>,
}

impl Report {
    /// The worst verdict (Ok for no checks).
    pub(crate) fn worst(&self) -> Level {
        self.checks.iter().map(|c| c.status).max().unwrap_or(Level::Ok)
    }

    pub(crate) fn count(&self, level: Level) -> usize {
        self.checks.iter().filter(|c| c.status == level).count()
    }
}

/// Run every check. `now` is this host's clock; today is taken in the company's zone. `role`:
/// the one whose MySQL grants the account should hold (`None`: the grants say which).
pub(crate) fn run(cfg: &Config, now: DateTime<Utc>, role: Option<Role>) -> Report {
    let today = now.with_timezone(&cfg.timezone).date_naive();
    let mut checks = vec![timezone(cfg, now)];
    let mut redis = redis_checks(cfg, &mut checks);
    let mut mysql = mysql_checks(cfg, &mut checks);
    checks.push(grants::verdict(cfg, mysql.as_mut(), role));
    checks.push(clock(cfg, redis.as_mut(), mysql.as_mut()));
    checks.push(signing(cfg, redis.as_mut()));
    checks.extend(relay(redis.as_mut()));
    let departments = mysql.as_mut().map(crate::mysql::server::departments);
    let headcounts = mysql.as_mut().and_then(|c| crate::mysql::server::headcounts(c).ok());
    checks.extend(broker_checks(cfg, departments, headcounts));
    match mysql.as_mut() {
        Some(conn) => checks.extend(settle_checks(cfg, conn, redis.as_mut(), today)),
        None => {
            checks.push(check("settle", Level::Skip, "not checked: MySQL is not usable"));
            checks.push(check("settled days", Level::Skip, "not checked: MySQL is not usable"));
            checks.push(check("unsettled days", Level::Skip, "not checked: MySQL is not usable"));
            checks.push(check("reviews", Level::Skip, "not checked: MySQL is not usable"));
        }
    }
    let mut report = Report {
        status: Level::Ok,
        checks,
    };
    report.status = report.worst();
    report
}

/// The signing key and keyring configured, and the events consumers refused so far (a warning:
/// someone published what no key holder recorded, or a key was revoked; `dlq list` shows them).
fn signing(cfg: &Config, redis: Option<&mut Board>) -> Check {
    // The files were read when the configuration was loaded: errors here cannot happen.
    let key = match cfg.signing.signer() {
        Ok(Some(s)) => format!("events signed with key {}", s.key_id()),
        _ => "events recorded here are not signed (no signing.key_file)".to_string(),
    };
    let mut redis = redis;
    let ring = match redis.as_deref_mut().map(|b| crate::ops::keys::verifiers(cfg, b)) {
        Some(Ok(Some(r))) => format!("consumers check events against {}", r.summary()),
        Some(Err(e)) => format!("the key registry copy not read: {}", one_line(&e)),
        _ => "consumers do not check events (no key in the registry, no signing.keyring_file)".to_string(),
    };
    let counts = match redis.map(|b| b.refused_counts()) {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            return check(
                "signing",
                Level::Warn,
                format!("{key}; {ring}; refused counts not read: {}", one_line(&e)),
            )
        }
        None => Default::default(),
    };
    if counts.is_empty() {
        return check("signing", Level::Ok, format!("{key}; {ring}; no event refused"));
    }
    let total: u64 = counts.values().sum();
    let by: Vec<String> = counts.iter().map(|(c, n)| format!("{c} {n}")).collect();
    check(
        "signing",
        Level::Warn,
        format!(
            "{key}; {ring}; {total} event(s) refused and parked ({}): see `attendance dlq list`",
            by.join(", ")
        ),
    )
}

/// Whether a `relay --follow` is alive (its heartbeat in Redis), and what waits in the outboxes:
/// events waiting with no relay alive is the warning (nothing sends them until one runs);
/// without a relay, check-ins publish their own events, so its absence alone is no fault.
fn relay(redis: Option<&mut Board>) -> [Check; 2] {
    let skip = |why: String| {
        [
            check("relay", Level::Skip, why.clone()),
            check("outbox", Level::Skip, why),
        ]
    };
    let Some(board) = redis else {
        return skip("not checked: Redis is unreachable".into());
    };
    let (alive, (departments, events)) = match board.relay_alive().and_then(|a| Ok((a, board.outbox_backlog()?))) {
        Ok(read) => read,
        Err(e) => return skip(format!("not checked: {}", one_line(&e))),
    };
    let relay = match alive {
        true => check(
            "relay",
            Level::Ok,
            "a relay --follow is alive (its heartbeat is in Redis)",
        ),
        false => check(
            "relay",
            Level::Ok,
            "no relay --follow alive: check-ins publish their own events, and what they leave pending waits for one",
        ),
    };
    let waiting = format!(
        "{} waiting in the outboxes of {}",
        plural(events, "event"),
        plural(departments, "department")
    );
    let outbox = match (events, alive) {
        (0, _) => check("outbox", Level::Ok, "no event waiting in the outboxes"),
        (_, true) => check("outbox", Level::Ok, format!("{waiting}; the relay is sending them")),
        (_, false) => check(
            "outbox",
            Level::Warn,
            format!(
                "{waiting} and no relay alive to send them: run `attendance relay` (or start attendance-relay.service)"
            ),
        ),
    };
    [relay, outbox]
}

/// This host's zone as cron and systemd timers read it: `TZ`, else `/etc/localtime`'s target.
fn host_zone() -> Option<String> {
    if let Ok(tz) = std::env::var("TZ") {
        return Some(tz.trim_start_matches(':').to_string());
    }
    let target = std::fs::read_link("/etc/localtime").ok()?;
    let s = target.to_string_lossy();
    Some(s.split_once("zoneinfo/").map_or(s.to_string(), |(_, z)| z.to_string()))
}

/// The company's zone, as configured (the zone decides "today" and "09:00"), beside this
/// host's, which is the one cron and timers read: the nightly settle must start after midnight
/// in the company's zone.
fn timezone(cfg: &Config, now: DateTime<Utc>) -> Check {
    let local = now.with_timezone(&cfg.timezone);
    let host = host_zone().unwrap_or_else(|| "unknown".into());
    check(
        "timezone",
        Level::Ok,
        format!(
            "{}: local time {} (UTC{}); this host's zone (cron's): {host}",
            cfg.timezone,
            local.format("%Y-%m-%d %H:%M"),
            local.format("%:z")
        ),
    )
}

/// Redis reachable, its persistence and its eviction policy. Returns the connection if usable.
fn redis_checks(cfg: &Config, checks: &mut Vec<Check>) -> Option<Board> {
    let mut con = match Board::open(cfg).and_then(|mut c| c.version().map(|v| (c, v))) {
        Ok((con, version)) => {
            checks.push(check(
                "redis",
                Level::Ok,
                format!("Redis {version} at {}", redact(&cfg.redis_url)),
            ));
            con
        }
        Err(e) => {
            let at = redact(&cfg.redis_url);
            checks.push(check("redis", Level::Fail, format!("{} ({at})", one_line(&e))));
            for name in ["redis persistence", "redis eviction", "redis replication"] {
                checks.push(check(name, Level::Skip, "not checked: Redis is unreachable"));
            }
            return None;
        }
    };
    match con.nodes_health() {
        Ok(nodes) => checks.extend(nodes::node_verdicts(cfg, &nodes)),
        Err(e) => {
            let why = format!("cannot read the nodes ({})", one_line(&e));
            for name in ["redis persistence", "redis eviction", "redis replication"] {
                checks.push(check(name, Level::Warn, why.clone()));
            }
        }
    }
    Some(con)
}

/// MySQL reachable and its schema up to date. Returns a connection if usable.
fn mysql_checks(cfg: &Config, checks: &mut Vec<Check>) -> Option<Conn> {
    let opened = crate::mysql::Db::open(cfg).and_then(|db| {
        let mut conn = db.conn()?;
        let version = crate::mysql::server::version(&mut conn)?;
        Ok((conn, version))
    });
    let mut conn = match opened {
        Ok((conn, version)) => {
            checks.push(check(
                "mysql",
                Level::Ok,
                format!("MySQL {version}, database {}", cfg.mysql_database().unwrap_or_default()),
            ));
            conn
        }
        Err(e) => {
            checks.push(check("mysql", Level::Fail, one_line(&e)));
            checks.push(check("migrations", Level::Skip, "not checked: MySQL is not usable"));
            return None;
        }
    };
    checks.push(match crate::mysql::server::migrations(&mut conn) {
        Ok(m) if m.pending.is_empty() => check(
            "migrations",
            Level::Ok,
            format!("{} of {} applied", m.applied.len(), m.known.len()),
        ),
        Ok(m) => check(
            "migrations",
            Level::Fail,
            format!("pending: {}; run `attendance migrate`", m.pending.join(", ")),
        ),
        Err(e) => check("migrations", Level::Fail, one_line(&e)),
    });
    Some(conn)
}

/// A server's clock read three times; the reading with the shortest round trip
/// (`domain::day::clock::best`) says how far it is from ours.
fn offset(mut read: impl FnMut() -> anyhow::Result<Reading>) -> anyhow::Result<chrono::Duration> {
    let readings = (0..3).map(|_| read()).collect::<anyhow::Result<Vec<_>>>()?;
    Ok(clock::best(readings).map(|r| r.offset()).unwrap_or_default())
}

/// This host's clock against Redis's `TIME` (the clock punches and settle go by) and MySQL's
/// `NOW()`. Past `policy.max_clock_skew_secs` this host's punches with `--at` and its settles
/// are refused: a failure; past a second, a warning.
fn clock(cfg: &Config, redis: Option<&mut Board>, mysql: Option<&mut Conn>) -> Check {
    let mut parts = Vec::new();
    let mut worst = chrono::Duration::zero();
    let mut failed = Vec::new();
    if let Some(con) = redis {
        match offset(|| con.read_clock()) {
            Ok(d) => {
                parts.push(format!("Redis {:+.3} s", d.num_milliseconds() as f64 / 1000.0));
                worst = worst.max(d.abs());
            }
            Err(e) => failed.push(format!("Redis: {}", one_line(&e))),
        }
    }
    if let Some(conn) = mysql {
        let mut read = || {
            let before = Utc::now();
            let server = crate::mysql::server::now(conn)?;
            Ok(Reading {
                before,
                server,
                after: Utc::now(),
            })
        };
        match offset(&mut read) {
            Ok(d) => {
                parts.push(format!("MySQL {:+.3} s", d.num_milliseconds() as f64 / 1000.0));
                worst = worst.max(d.abs());
            }
            Err(e) => failed.push(format!("MySQL: {}", one_line(&e))),
        }
    }
    if parts.is_empty() && failed.is_empty() {
        return check("clock", Level::Skip, "not checked: neither Redis nor MySQL is usable");
    }
    let max = cfg.policy.max_clock_skew_secs;
    let worst = worst.to_std().unwrap_or_default();
    let level = if worst > Duration::from_secs(u64::from(max)) {
        Level::Fail
    } else if !failed.is_empty() || worst > CLOCK_WARN {
        Level::Warn
    } else {
        Level::Ok
    };
    parts.extend(failed);
    let what = format!("servers minus this host: {}", parts.join(", "));
    let hint = match level {
        Level::Fail => format!(
            "; past policy.max_clock_skew_secs = {max}: this host's punches with --at and its settles are refused; set its clock (NTP)"
        ),
        Level::Warn => "; synchronise the clocks (NTP)".to_string(),
        _ => String::new(),
    };
    check("clock", level, format!("{what}{hint}"))
}

/// The broker, the queues of every department of the roster and the nodes' file handles.
fn broker_checks(
    cfg: &Config,
    departments: Option<anyhow::Result<Vec<String>>>,
    headcounts: Option<std::collections::HashMap<String, u64>>,
) -> Vec<Check> {
    let departments = match departments {
        Some(Ok(d)) => Some(d),
        Some(Err(_)) | None => None,
    };
    let state = match queues::broker_state(cfg, departments.as_deref().unwrap_or(&[])) {
        Ok(s) => s,
        Err(e) => {
            return vec![
                check("rabbitmq", Level::Fail, one_line(&e)),
                check("queues", Level::Skip, "not checked: RabbitMQ is unreachable"),
                check("queue backlog", Level::Skip, "not checked: RabbitMQ is unreachable"),
                check("broker files", Level::Skip, "not checked: RabbitMQ is unreachable"),
            ]
        }
    };
    let broker = check("rabbitmq", Level::Ok, format!("{} at {}", state.version, state.broker));
    let queues = match &departments {
        Some(d) => queue_verdict(d.len(), &state),
        None => check("queues", Level::Skip, "not checked: the roster (MySQL) is not readable"),
    };
    let backlog = match &headcounts {
        Some(h) if departments.is_some() => backlog::verdict(cfg, &state.depths, h),
        _ => check(
            "queue backlog",
            Level::Skip,
            "not checked: the roster (MySQL) is not readable",
        ),
    };
    // The roster's departments with no queue yet: their queues are still to come.
    let missing = departments.as_ref().map_or(0, |_| state.missing.len()) as u64;
    let mut checks = vec![broker, queues, backlog];
    checks.extend(files_verdict(cfg, missing));
    checks
}

/// Every department's queue declared, and nothing parked.
fn queue_verdict(departments: usize, s: &queues::BrokerState) -> Check {
    if departments == 0 {
        return check("queues", Level::Ok, "no departments in the roster yet");
    }
    let mut detail = format!(
        "{} of {departments} departments' queues declared, {} messages waiting",
        s.declared, s.messages
    );
    let mut level = Level::Ok;
    if !s.missing.is_empty() {
        level = Level::Warn;
        let shown: Vec<&str> = s.missing.iter().take(5).map(String::as_str).collect();
        let more = if s.missing.len() > shown.len() { ", ..." } else { "" };
        detail += &format!(
            "; no queue yet for {}{more} (declared at a department's first event; `attendance queues declare` declares them all now)",
            shown.join(", ")
        );
    }
    if !s.exchange {
        level = Level::Warn;
        detail += "; the events exchange is missing";
    }
    if let Some(parked) = s.parked.filter(|n| *n > 0) {
        level = Level::Warn;
        detail += &format!("; {parked} notification(s) parked (`attendance dlq list`)");
    }
    check("queues", level, detail)
}

/// Each node's open-files headroom for the queues it carries, from the management API when
/// configured: the queues it leads and follows now (their actual placement), and its share of
/// the roster's department queues not declared yet (`missing`), judged as `queues declare`
/// judges them ([`management::headroom`]).
/// With it, where the department queues' leaders sit (`leaders`), from the same reading.
fn files_verdict(cfg: &Config, missing: u64) -> Vec<Check> {
    let Some(url) = &cfg.amqp.management_url else {
        return vec![
            check(
                "broker files",
                Level::Skip,
                "not checked: set amqp.management_url to read the nodes' open files",
            ),
            check(
                "queue leaders",
                Level::Skip,
                "not checked: set amqp.management_url to read where the queues' leaders are",
            ),
        ];
    };
    let timeout = Duration::from_millis(u64::from(cfg.amqp.connect_timeout_ms));
    let read = management::nodes(url, timeout).and_then(|n| Ok((n, management::queue_seats(url, timeout)?)));
    let unread = |why: String| {
        vec![
            check("broker files", Level::Warn, why),
            check(
                "queue leaders",
                Level::Skip,
                "not checked: the management API was not read",
            ),
        ]
    };
    let (nodes, seats) = match read {
        Ok((n, _)) if n.is_empty() => return unread("the management API lists no node".into()),
        Ok(r) => r,
        Err(e) => return unread(format!("not read: {}", one_line(&e))),
    };
    let leaders = leaders::verdict(&nodes, &seats);
    let quorum = cfg.amqp.queue_type == crate::config::QueueType::Quorum;
    let placed = management::headroom(&nodes, &management::placement(&seats), missing, quorum);
    let (mut level, mut short) = (Level::Ok, false);
    let mut parts = Vec::new();
    for (n, (_, p, lacks)) in nodes.iter().zip(placed) {
        let (Some(used), Some(total)) = (n.fd_used, n.fd_total) else {
            level = level.max(Level::Warn);
            parts.push(format!("{}: no file handle figures yet (a node just started?)", n.name));
            continue;
        };
        let node_level = if lacks.is_some() {
            Level::Fail
        } else if used * 10 > total * 8 || (p.handles() + SPARE_HANDLES) * 10 > total * 8 {
            Level::Warn
        } else {
            Level::Ok
        };
        short |= node_level > Level::Ok;
        level = level.max(node_level);
        parts.push(format!(
            "{}: {used} of {total} file handles used, leads {} queue(s) and follows {}: about {} handles",
            n.name,
            p.leads,
            p.follows,
            p.handles()
        ));
    }
    let hint = if short {
        "; raise the broker's open-files limit (ulimit -n), or spread the leaders (`rabbitmq-queues rebalance quorum`)"
    } else {
        ""
    };
    let detail = format!(
        "{}; {missing} department queue(s) not declared yet counted in{hint}",
        parts.join(", ")
    );
    vec![check("broker files", level, detail), leaders]
}

/// The last settle run's outcome, and the past days still waiting to be settled.
fn settle_checks(cfg: &Config, conn: &mut Conn, redis: Option<&mut Board>, today: NaiveDate) -> Vec<Check> {
    let last = match runs::list(conn, None, 1) {
        Ok(r) => r.into_iter().next(),
        Err(e) => {
            let why = format!("cannot read the settle runs: {}", one_line(&e));
            return vec![
                check("settle", Level::Fail, why),
                check("settled days", Level::Skip, "not checked"),
                check("unsettled days", Level::Skip, "not checked"),
                reviews(conn),
            ];
        }
    };
    let last_verdict = match &last {
        None => check(
            "settle",
            Level::Warn,
            "no settle run recorded yet (schedule `attendance settle`: deploy/)",
        ),
        Some(r) => run_verdict(cfg, r),
    };
    let mut redis = redis;
    let short = short_days(conn, redis.as_deref_mut());
    let refused = refused_punches(conn);
    vec![
        last_verdict,
        refused,
        short,
        unsettled(cfg, conn, redis, today),
        reviews(conn),
    ]
}

/// Runs `doctor` looks back over for refused punches.
const REFUSED_RUNS: u32 = 7;

/// Punches the last settle runs refused (board fields and punch log entries no good signed
/// record backs): someone wrote to Redis what no kiosk signed.
fn refused_punches(conn: &mut Conn) -> Check {
    let name = "refused punches";
    let runs = match runs::list(conn, None, REFUSED_RUNS) {
        Ok(r) => r,
        Err(e) => {
            return check(
                name,
                Level::Fail,
                format!("cannot read the settle runs: {}", one_line(&e)),
            )
        }
    };
    let hit: Vec<String> = runs
        .iter()
        .filter(|r| r.refused_punches > 0)
        .map(|r| format!("run {} ({}): {}", r.id, r.work_date, r.refused_punches))
        .collect();
    if hit.is_empty() {
        return check(
            name,
            Level::Ok,
            format!("none in the last {} settle run(s)", runs.len()),
        );
    }
    check(
        name,
        Level::Warn,
        format!(
            "{}: board fields or punch log entries that no signed record backs, left out of the rows \
             (`attendance settle --date D --json` says which kind, `refused_punches`); someone wrote to Redis what \
             no kiosk signed: check who holds the kiosks' Redis password and the ACLs (docs/security.md)",
            hit.join(", ")
        ),
    )
}

/// The settled days MySQL holds fewer rows of than their settle left (the record in Redis): a
/// failure naming each, what was expected and found, and what restores it.
fn short_days(conn: &mut Conn, redis: Option<&mut Board>) -> Check {
    let Some(board) = redis else {
        return check(
            "settled days",
            Level::Skip,
            "not checked: Redis (which keeps their record) is unreachable",
        );
    };
    match crate::ops::settled::short_days(board, conn) {
        Ok(short) if short.is_empty() => check(
            "settled days",
            Level::Ok,
            "MySQL holds every row the recent settles wrote",
        ),
        Ok(short) => check("settled days", Level::Fail, crate::ops::settled::describe(&short)),
        Err(e) => check("settled days", Level::Warn, format!("not checked: {}", one_line(&e))),
    }
}

/// Punches held for review and still pending (back-dated past the replay window): a warning,
/// since each leaves its day short until a supervisor decides.
fn reviews(conn: &mut Conn) -> Check {
    match crate::mysql::held_punches::pending(conn, None) {
        Ok(0) => check("reviews", Level::Ok, "no punch held for review"),
        Ok(n) => check(
            "reviews",
            Level::Warn,
            format!("{n} punch(es) held for review, pending (`attendance review list`, then approve or reject)"),
        ),
        Err(e) => check(
            "reviews",
            Level::Warn,
            format!("cannot count held punches: {}", one_line(&e)),
        ),
    }
}

fn run_verdict(cfg: &Config, r: &runs::Run) -> Check {
    let started = r
        .started_at
        .and_utc()
        .with_timezone(&cfg.timezone)
        .format("%Y-%m-%d %H:%M");
    let what = format!("run {} for {} started {started}", r.id, r.work_date);
    match r.outcome.as_str() {
        "ok" => check(
            "settle",
            Level::Ok,
            format!("{what}: ok, {} rows written", r.rows_written),
        ),
        "partial" => check(
            "settle",
            Level::Fail,
            format!(
                "{what}: {} row(s) failed (`attendance report runs --failures`); rerun `attendance settle --date {}`",
                r.failed, r.work_date
            ),
        ),
        "running" => check(
            "settle",
            Level::Warn,
            format!("{what}: still running, or killed (a rerun of the day finishes it)"),
        ),
        other => check(
            "settle",
            Level::Warn,
            format!("{what}: {other}; rerun `attendance settle --date {}`", r.work_date),
        ),
    }
}

/// Past days with boards still in Redis, and past work days since the last settled one that
/// no run settled.
/// With Redis unreachable its past boards cannot be read, so the verdict is never ok: the
/// days MySQL shows waiting are a warning, none is a skip.
fn unsettled(cfg: &Config, conn: &mut Conn, redis: Option<&mut Board>, today: NaiveDate) -> Check {
    let mut waiting: BTreeMap<NaiveDate, &'static str> = BTreeMap::new();
    let redis_read = redis.is_some();
    if let Some(con) = redis {
        match con.past_board_days(today) {
            Ok(days) => waiting.extend(days.into_keys().map(|d| (d, "boards in Redis"))),
            Err(e) => return check("unsettled days", Level::Warn, one_line(&e)),
        }
    }
    match unsettled_workdays(cfg, conn, today) {
        Ok(days) => {
            for d in days {
                waiting.entry(d).or_insert("work day, no settle run");
            }
        }
        Err(e) => return check("unsettled days", Level::Warn, one_line(&e)),
    }
    if waiting.is_empty() && !redis_read {
        return check(
            "unsettled days",
            Level::Skip,
            "not checked: Redis is unreachable, so the past days' boards in it were not read (MySQL shows no work day without a settle run)",
        );
    }
    if waiting.is_empty() {
        return check("unsettled days", Level::Ok, "no past day waiting to be settled");
    }
    let shown: Vec<String> = waiting.iter().take(5).map(|(d, why)| format!("{d} ({why})")).collect();
    let more = if waiting.len() > shown.len() { ", ..." } else { "" };
    let unread = if redis_read {
        ""
    } else {
        " (Redis unreachable: its past boards not read)"
    };
    check(
        "unsettled days",
        Level::Warn,
        format!(
            "{} past day(s) waiting: {}{more}{unread}; run `attendance settle --date D` for each",
            waiting.len(),
            shown.join(", ")
        ),
    )
}

/// Work days after the last cleanly settled day (within the look-back) and before today that
/// no run settled cleanly. None settled ever: nothing to compare with, nothing reported.
fn unsettled_workdays(cfg: &Config, conn: &mut Conn, today: NaiveDate) -> anyhow::Result<Vec<NaiveDate>> {
    let from = today - chrono::Duration::days(LOOKBACK_DAYS);
    let yesterday = today - chrono::Duration::days(1);
    let settled = crate::mysql::server::settled_days(conn, from, yesterday)?;
    let Some(last) = settled.last().copied() else {
        return Ok(Vec::new());
    };
    let overrides = crate::mysql::people::calendar_rows::overrides(conn, last, yesterday)?;
    let rules = crate::ops::lookup::Rules::new(cfg, crate::mysql::people::policy_rows::rulebook(conn)?);
    let mut days = Vec::new();
    for d in last.iter_days().skip(1).take_while(|d| *d <= yesterday) {
        if crate::domain::day::workdays::is_workday(&rules.on(d)?, &overrides, d) && !settled.contains(&d) {
            days.push(d);
        }
    }
    Ok(days)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_verdict_wins_and_skip_counts_as_ok() {
        let mut r = Report {
            status: Level::Ok,
            checks: Vec::new(),
        };
        assert_eq!(r.worst(), Level::Ok);
        r.checks.push(check("a", Level::Skip, ""));
        assert!(r.worst() < Level::Warn);
        r.checks.push(check("b", Level::Warn, ""));
        r.checks.push(check("c", Level::Ok, ""));
        assert_eq!(r.worst(), Level::Warn);
        assert_eq!(r.count(Level::Warn), 1);
    }
}

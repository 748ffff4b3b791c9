//! Every settable key of the configuration, in one table: its name in the file
//! (`section.key`), the environment variable that sets it (`ATTENDANCE_SECTION_KEY`), its
//! bounds and where it lands. The file and the environment are two layers read through the
//! same table, so a key cannot be settable one way and not the other, nor checked in one and
//! not the other.

use chrono::{NaiveTime, Weekday};
use toml::Value;

/// What every setting's environment variable starts with.
pub(crate) const PREFIX: &str = "ATTENDANCE_";

use super::{parse_tz, Config, QueueType};
use crate::domain::day::overtime::{parse_weekly, DailyAfter};
use crate::error::{redact, Error};

/// A value as a layer gives it: typed by TOML, or text from the environment.
pub(crate) enum Raw {
    Toml(toml::Value),
    Env(String),
}

impl Raw {
    fn shown(&self) -> String {
        match self {
            Raw::Toml(toml::Value::String(s)) | Raw::Env(s) => s.clone(),
            Raw::Toml(v) => v.to_string(),
        }
    }

    fn text(&self) -> Result<String, String> {
        match self {
            Raw::Toml(toml::Value::String(s)) | Raw::Env(s) => Ok(s.clone()),
            Raw::Toml(_) => Err("a string".into()),
        }
    }

    /// An integer in `ok`. The range is the key's documented bound: nothing is clamped.
    fn int<T: TryFrom<i64> + Copy + Into<i64>>(&self, ok: std::ops::RangeInclusive<T>) -> Result<T, String> {
        let expected = || format!("an integer from {} to {}", (*ok.start()).into(), (*ok.end()).into());
        let n = match self {
            Raw::Toml(toml::Value::Integer(n)) => *n,
            Raw::Env(s) => s.trim().parse::<i64>().map_err(|_| expected())?,
            Raw::Toml(_) => return Err(expected()),
        };
        let lo: i64 = (*ok.start()).into();
        let hi: i64 = (*ok.end()).into();
        if n < lo || n > hi {
            return Err(expected());
        }
        T::try_from(n).map_err(|_| expected())
    }

    /// A switch: a TOML boolean, or true/false (also 1/0, yes/no, on/off) in the environment.
    fn boolean(&self) -> Result<bool, String> {
        let expected = || "true or false".to_string();
        match self {
            Raw::Toml(toml::Value::Boolean(b)) => Ok(*b),
            Raw::Env(s) => match s.trim() {
                "true" | "1" | "yes" | "on" => Ok(true),
                "false" | "0" | "no" | "off" => Ok(false),
                _ => Err(expected()),
            },
            Raw::Toml(_) => Err(expected()),
        }
    }

    /// A list: a TOML array of strings, or comma-separated text in the environment.
    fn list(&self) -> Result<Vec<String>, String> {
        let expected =
            || "a list of day names such as [\"mon\", \"tue\"] (comma-separated in the environment)".to_string();
        match self {
            // `mon,,tue` is a slip, not two days: an empty item is refused, not skipped.
            Raw::Env(s) => s
                .split(',')
                .map(|d| {
                    Some(d.trim().to_string())
                        .filter(|d| !d.is_empty())
                        .ok_or_else(expected)
                })
                .collect(),
            Raw::Toml(toml::Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(str::to_string).ok_or_else(expected))
                .collect(),
            Raw::Toml(_) => Err(expected()),
        }
    }
}

/// One key: where it lands in [`Config`], refusing a value out of its bounds.
pub(crate) struct Key {
    /// `section.key` as in the file; a top-level key has no section.
    pub name: &'static str,
    set: fn(&mut Config, &Raw) -> Result<(), String>,
    /// The value in force, as the file would give it; `None`: not set (an optional key).
    /// `config show` prints it, and a file of those values gives the same configuration back.
    get: fn(&Config) -> Option<Value>,
}

impl Key {
    /// The environment variable: `ATTENDANCE_` and the name, dots as underscores, upper case.
    pub(crate) fn env_var(&self) -> String {
        let mut var = String::with_capacity(PREFIX.len() + self.name.len());
        var.push_str(PREFIX);
        var.extend(
            self.name
                .chars()
                .map(|c| if c == '.' { '_' } else { c.to_ascii_uppercase() }),
        );
        var
    }

    /// Whether `var` is this key's environment variable ([`Key::env_var`], without making it:
    /// every process checks its whole environment against every key).
    pub(crate) fn is_env_var(&self, var: &str) -> bool {
        var.strip_prefix(PREFIX).is_some_and(|rest| {
            rest.len() == self.name.len()
                && rest
                    .bytes()
                    .zip(self.name.bytes())
                    .all(|(v, k)| v == if k == b'.' { b'_' } else { k.to_ascii_uppercase() })
        })
    }

    /// The value in force, as TOML (unredacted: `config show` hides the secrets).
    pub(crate) fn value(&self, cfg: &Config) -> Option<Value> {
        (self.get)(cfg)
    }

    /// Set the key from `raw`; `source` names where the value came from (`file PATH`,
    /// `ATTENDANCE_X`, `ATTENDANCE_X or --x`), in this error and in any later one about the
    /// merged configuration.
    pub(crate) fn apply(&self, cfg: &mut Config, raw: &Raw, source: &str) -> Result<(), Error> {
        (self.set)(cfg, raw).map_err(|expected| {
            Error::input(format!(
                "config: {} ({source}): invalid value '{}' ({expected})",
                self.name,
                redact(&raw.shown())
            ))
        })?;
        cfg.sources.set(self.name, source);
        Ok(())
    }
}

fn text(s: &str) -> Option<Value> {
    Some(Value::String(s.to_string()))
}

fn int<T: TryInto<i64>>(n: T) -> Option<Value> {
    n.try_into().ok().map(Value::Integer)
}

fn clock(t: NaiveTime) -> Option<Value> {
    text(&t.format("%H:%M").to_string())
}

fn days(d: &[Weekday]) -> Option<Value> {
    Some(Value::Array(
        d.iter().map(|d| Value::String(d.to_string().to_lowercase())).collect(),
    ))
}

fn path(p: &Option<std::path::PathBuf>) -> Option<Value> {
    p.as_ref().and_then(|p| text(&p.display().to_string()))
}

/// One broker as a string, a cluster's list as an array.
fn urls(u: &[&str]) -> Option<Value> {
    match u {
        [one] => text(one),
        many => Some(Value::Array(
            many.iter().map(|u| Value::String(u.to_string())).collect(),
        )),
    }
}

fn hhmm(raw: &Raw) -> Result<NaiveTime, String> {
    NaiveTime::parse_from_str(&raw.text()?, "%H:%M").map_err(|_| "HH:MM".to_string())
}

fn weekdays(raw: &Raw) -> Result<Vec<Weekday>, String> {
    let mut days = Vec::new();
    for d in raw.list()? {
        let wd: Weekday = d
            .parse()
            .map_err(|_| format!("a day name such as mon or monday, not '{d}'"))?;
        if !days.contains(&wd) {
            days.push(wd);
        }
    }
    Ok(days)
}

/// `none`, or minutes as an integer (TOML) or text.
fn weekly(raw: &Raw) -> Result<Option<u32>, String> {
    match raw {
        Raw::Toml(toml::Value::Integer(n)) => parse_weekly(&n.to_string()),
        _ => parse_weekly(&raw.text()?),
    }
}

fn queue_type(raw: &Raw) -> Result<QueueType, String> {
    match raw.text()?.as_str() {
        "quorum" => Ok(QueueType::Quorum),
        "classic" => Ok(QueueType::Classic),
        _ => Err("quorum or classic".into()),
    }
}

/// One URL, or several: a TOML array, or comma-separated text (a comma inside a password is
/// written `%2C`). Kept as comma-separated text; [`Config::amqp_urls`] splits it.
fn url_list(raw: &Raw) -> Result<String, String> {
    match raw {
        Raw::Toml(toml::Value::Array(a)) => {
            let urls: Option<Vec<&str>> = a.iter().map(toml::Value::as_str).collect();
            urls.filter(|u| !u.is_empty())
                .map(|u| u.join(","))
                .ok_or_else(|| "a URL or a non-empty list of URLs".to_string())
        }
        _ => raw.text(),
    }
}

fn http_url(raw: &Raw) -> Result<String, String> {
    Some(raw.text()?)
        .filter(|u| u.starts_with("http://"))
        .ok_or_else(|| "a URL starting with http://".to_string())
}

/// Set a field to a value, or say what was expected.
fn put<T>(field: &mut T, value: Result<T, String>) -> Result<(), String> {
    *field = value?;
    Ok(())
}

/// A timeout or delay of the broker, in milliseconds.
const BROKER_MS: std::ops::RangeInclusive<u32> = 1..=600_000;

/// A Redis or MySQL socket timeout, in milliseconds.
const IO_MS: std::ops::RangeInclusive<u32> = 1..=600_000;

/// The most rows settle may put in one multi-row upsert: more would pass MySQL's 65,535
/// placeholders at 9 columns a row. `mysql::attendance` asserts, at compile time, that this is
/// its own `MAX_ROWS_PER_STATEMENT`, so a new column cannot leave the bound stale.
pub(crate) const MAX_BATCH_ROWS: usize = 65_535 / 9;

const MAX_BATCH: u32 = MAX_BATCH_ROWS as u32;

/// A `u32` bound for a `usize` field.
fn size(v: &Raw, ok: std::ops::RangeInclusive<u32>) -> Result<usize, String> {
    v.int(ok).map(|n| n as usize)
}

/// Every key. Add a key here and it is settable from the file and the environment and
/// checked; list it in docs/configuration.md too.
#[rustfmt::skip]
pub(crate) const KEYS: &[Key] = &[
    Key { name: "redis_url", set: |c, v| put(&mut c.redis_url, v.text()), get: |c| text(&c.redis_url) },
    Key { name: "mysql_url", set: |c, v| put(&mut c.mysql_url, v.text()), get: |c| text(&c.mysql_url) },
    Key { name: "report_mysql_url", set: |c, v| put(&mut c.report_mysql_url, v.text().map(Some)), get: |c| c.report_mysql_url.as_deref().and_then(text) },
    // One broker, or a cluster's nodes tried in order (a list, or comma-separated text).
    Key { name: "amqp_url", set: |c, v| put(&mut c.amqp_url, url_list(v)), get: |c| urls(&c.amqp_urls()) },
    // Passwords kept out of the URLs (config/secrets.rs): each file private to its reader.
    Key { name: "redis_password_file", set: |c, v| put(&mut c.password_files.redis, v.text().map(|p| Some(p.into()))), get: |c| path(&c.password_files.redis) },
    Key { name: "mysql_password_file", set: |c, v| put(&mut c.password_files.mysql, v.text().map(|p| Some(p.into()))), get: |c| path(&c.password_files.mysql) },
    Key { name: "report_mysql_password_file", set: |c, v| put(&mut c.password_files.report_mysql, v.text().map(|p| Some(p.into()))), get: |c| path(&c.password_files.report_mysql) },
    Key { name: "amqp_password_file", set: |c, v| put(&mut c.password_files.amqp, v.text().map(|p| Some(p.into()))), get: |c| path(&c.password_files.amqp) },
    // The company's name, for the title of a workbook's month sheet.
    Key { name: "company", set: |c, v| put(&mut c.company, v.text()), get: |c| text(&c.company) },
    Key { name: "namespace", set: |c, v| put(&mut c.namespace, v.text()), get: |c| text(&c.namespace) },
    Key { name: "timezone", set: |c, v| put(&mut c.timezone, v.text().and_then(|t| parse_tz(&t))), get: |c| text(c.timezone.name()) },
    Key { name: "policy.checkin_deadline", set: |c, v| put(&mut c.policy.checkin_deadline, hhmm(v)), get: |c| clock(c.policy.checkin_deadline) },
    Key { name: "policy.checkout_from", set: |c, v| put(&mut c.policy.checkout_from, hhmm(v)), get: |c| clock(c.policy.checkout_from) },
    Key { name: "policy.grace_minutes", set: |c, v| put(&mut c.policy.grace_minutes, v.int(0..=240)), get: |c| int(c.policy.grace_minutes) },
    Key { name: "policy.work_days", set: |c, v| put(&mut c.policy.work_days, weekdays(v)), get: |c| days(&c.policy.work_days) },
    // Unused since a punch's kind no longer depends on arrival order; kept so that old files load.
    Key { name: "policy.repeat_window_minutes", set: |c, v| put(&mut c.policy.repeat_window_minutes, v.int(0..=240)), get: |c| int(c.policy.repeat_window_minutes) },
    // Between checkin_deadline and checkout_from (checked with them, in Config::check).
    Key { name: "policy.auto_kind_split", set: |c, v| put(&mut c.policy.auto_kind_split, hhmm(v).map(Some)), get: |c| clock(c.policy.auto_kind_split()) },
    // An hour of kiosk clock skew is already a broken kiosk.
    Key { name: "policy.max_future_skew_secs", set: |c, v| put(&mut c.policy.max_future_skew_secs, v.int(0..=3_600)), get: |c| int(c.policy.max_future_skew_secs) },
    // Past a second, a host's clock is off; an hour off is a broken host, not a skew to allow.
    Key { name: "policy.max_clock_skew_secs", set: |c, v| put(&mut c.policy.max_clock_skew_secs, v.int(1..=3_600)), get: |c| int(c.policy.max_clock_skew_secs) },
    // A week covers a kiosk offline over a long weekend; a year at most, a day must become final.
    Key { name: "policy.max_backdate_days", set: |c, v| put(&mut c.policy.max_backdate_days, v.int(0..=3660)), get: |c| int(c.policy.max_backdate_days) },
    // Minutes, up to max_backdate_days' own bound (3660 days): past it no punch is accepted anyway.
    Key { name: "policy.replay_window_minutes", set: |c, v| put(&mut c.policy.replay_window_minutes, v.int(0..=5_270_400)), get: |c| int(c.policy.replay_window_minutes) },
    // Four hours is already two shifts' worth; the hours rule keeps it inside the shift (domain::day::worked).
    Key { name: "policy.break_minutes", set: |c, v| put(&mut c.policy.break_minutes, v.int(0..=240)), get: |c| int(c.policy.break_minutes) },
    // The running relay tells each department who has not arrived (docs/notifications.md#absence-alerts).
    Key { name: "policy.absence_alerts", set: |c, v| put(&mut c.policy.absence_alerts, v.boolean()), get: |c| Some(Value::Boolean(c.policy.absence_alerts)) },
    // Minutes after the check-in deadline; unset: the grace. Twelve hours is past any morning.
    Key { name: "policy.absence_alert_minutes", set: |c, v| put(&mut c.policy.absence_alert_minutes, v.int(0..=720).map(Some)), get: |c| int(c.policy.absence_alert_minutes.unwrap_or(c.policy.grace_minutes)) },
    // Overtime (domain::day::overtime, docs/policy.md#overtime): shift, shift+N, N minutes or none.
    Key { name: "policy.overtime_daily_after", set: |c, v| put(&mut c.policy.overtime.daily_after, v.text().and_then(|t| DailyAfter::parse(&t))), get: |c| text(&c.policy.overtime.daily_after.text()) },
    // Minutes of a Monday-Sunday week, at most the week; none: no weekly threshold.
    Key { name: "policy.overtime_weekly_after", set: |c, v| put(&mut c.policy.overtime.weekly_after, weekly(v)), get: |c| c.policy.overtime.weekly_after.map_or_else(|| text("none"), int) },
    // A step of 1 is no rounding; past four hours a step would eat whole evenings.
    Key { name: "policy.overtime_round_minutes", set: |c, v| put(&mut c.policy.overtime.round_minutes, v.int(1..=240)), get: |c| int(c.policy.overtime.round_minutes) },
    // Up to half a day: under it a day's overtime counts 0.
    Key { name: "policy.overtime_minimum_minutes", set: |c, v| put(&mut c.policy.overtime.minimum_minutes, v.int(0..=720)), get: |c| int(c.policy.overtime.minimum_minutes) },
    Key { name: "policy.overtime_rest_days_apart", set: |c, v| put(&mut c.policy.overtime.rest_days_apart, v.boolean()), get: |c| Some(Value::Boolean(c.policy.overtime.rest_days_apart)) },
    Key { name: "policy.overtime_needs_approval", set: |c, v| put(&mut c.policy.overtime.needs_approval, v.boolean()), get: |c| Some(Value::Boolean(c.policy.overtime.needs_approval)) },
    Key { name: "amqp.queue_type", set: |c, v| put(&mut c.amqp.queue_type, queue_type(v)), get: |c| text(match c.amqp.queue_type { QueueType::Quorum => "quorum", QueueType::Classic => "classic" }) },
    Key { name: "amqp.max_retries", set: |c, v| put(&mut c.amqp.max_retries, v.int(1..=1_000)), get: |c| int(c.amqp.max_retries) },
    Key { name: "amqp.retry_delay_ms", set: |c, v| put(&mut c.amqp.retry_delay_ms, v.int(BROKER_MS)), get: |c| int(c.amqp.retry_delay_ms) },
    // Unconfirmed events wait in amiquip's write buffer, whose 16 MiB high-water mark would
    // block a publish with no timeout: 10,000 events of ~500 bytes stay far below it.
    Key { name: "amqp.confirm_window", set: |c, v| put(&mut c.amqp.confirm_window, size(v, 1..=10_000)), get: |c| int(c.amqp.confirm_window) },
    Key { name: "amqp.publishers", set: |c, v| put(&mut c.amqp.publishers, size(v, 1..=16)), get: |c| int(c.amqp.publishers) },
    Key { name: "amqp.connect_timeout_ms", set: |c, v| put(&mut c.amqp.connect_timeout_ms, v.int(BROKER_MS)), get: |c| int(c.amqp.connect_timeout_ms) },
    // RabbitMQ holds a refused login 3 s before it closes: less would read every refusal as a silent broker.
    Key { name: "amqp.login_timeout_ms", set: |c, v| put(&mut c.amqp.login_timeout_ms, v.int(BROKER_MS)), get: |c| int(c.amqp.login_timeout_ms) },
    Key { name: "amqp.confirm_timeout_ms", set: |c, v| put(&mut c.amqp.confirm_timeout_ms, v.int(BROKER_MS)), get: |c| int(c.amqp.confirm_timeout_ms) },
    Key { name: "amqp.checkin_confirm_ms", set: |c, v| put(&mut c.amqp.checkin_confirm_ms, v.int(BROKER_MS)), get: |c| int(c.amqp.checkin_confirm_ms) },
    // The events a lost connection confirmed this long before, published again; ten minutes
    // at most: the relay keeps them in memory (about 500 bytes each).
    Key { name: "amqp.republish_horizon_seconds", set: |c, v| put(&mut c.amqp.republish_horizon_seconds, v.int(0..=600)), get: |c| int(c.amqp.republish_horizon_seconds) },
    Key { name: "amqp.handoff", set: |c, v| put(&mut c.amqp.handoff, v.boolean()), get: |c| Some(Value::Boolean(c.amqp.handoff)) },
    Key { name: "amqp.events_exchange", set: |c, v| put(&mut c.amqp.events_exchange, v.boolean()), get: |c| Some(Value::Boolean(c.amqp.events_exchange)) },
    Key { name: "amqp.declare", set: |c, v| put(&mut c.amqp.declare, v.boolean()), get: |c| Some(Value::Boolean(c.amqp.declare)) },
    Key { name: "amqp.close_timeout_ms", set: |c, v| put(&mut c.amqp.close_timeout_ms, v.int(BROKER_MS)), get: |c| int(c.amqp.close_timeout_ms) },
    // 0 would turn heartbeats off: a silent broker could then hold a live watcher forever.
    Key { name: "amqp.heartbeat_secs", set: |c, v| put(&mut c.amqp.heartbeat_secs, v.int(1..=3_600u16)), get: |c| int(c.amqp.heartbeat_secs) },
    // A broker policy on the department queues (0: no limit); a year at most, a sane TTL.
    Key { name: "amqp.queue_max_length", set: |c, v| put(&mut c.amqp.queue_max_length, v.int(0..=100_000_000)), get: |c| int(c.amqp.queue_max_length) },
    Key { name: "amqp.queue_max_age_hours", set: |c, v| put(&mut c.amqp.queue_max_age_hours, v.int(0..=8_784)), get: |c| int(c.amqp.queue_max_age_hours) },
    // 0 would mean "wait forever" to a socket: exactly what the timeouts forbid.
    Key { name: "redis.connect_timeout_ms", set: |c, v| put(&mut c.redis.connect_timeout_ms, v.int(IO_MS)), get: |c| int(c.redis.connect_timeout_ms) },
    Key { name: "redis.read_timeout_ms", set: |c, v| put(&mut c.redis.read_timeout_ms, v.int(IO_MS)), get: |c| int(c.redis.read_timeout_ms) },
    Key { name: "redis.write_timeout_ms", set: |c, v| put(&mut c.redis.write_timeout_ms, v.int(IO_MS)), get: |c| int(c.redis.write_timeout_ms) },
    // A replica per master is the usual cluster; more than 16 acknowledging is no deployment.
    Key { name: "redis.min_replicas_acked", set: |c, v| put(&mut c.replication.min_replicas_acked, v.int(0..=16)), get: |c| int(c.replication.min_replicas_acked) },
    // Below redis.read_timeout_ms (checked with it, in Config::check): WAIT blocks the reply.
    Key { name: "redis.wait_timeout_ms", set: |c, v| put(&mut c.replication.wait_timeout_ms, v.int(1..=60_000)), get: |c| int(c.replication.wait_timeout_ms) },
    Key { name: "mysql.connect_timeout_ms", set: |c, v| put(&mut c.mysql.connect_timeout_ms, v.int(IO_MS)), get: |c| int(c.mysql.connect_timeout_ms) },
    Key { name: "mysql.read_timeout_ms", set: |c, v| put(&mut c.mysql.read_timeout_ms, v.int(IO_MS)), get: |c| int(c.mysql.read_timeout_ms) },
    Key { name: "mysql.write_timeout_ms", set: |c, v| put(&mut c.mysql.write_timeout_ms, v.int(IO_MS)), get: |c| int(c.mysql.write_timeout_ms) },
    // Read by `doctor` only; plain HTTP, as the AMQP side has no TLS in this build either.
    Key { name: "amqp.management_url", set: |c, v| put(&mut c.amqp.management_url, http_url(v).map(Some)), get: |c| c.amqp.management_url.as_deref().and_then(text) },
    Key { name: "settle.batch_size", set: |c, v| put(&mut c.settle.batch_size, size(v, 1..=MAX_BATCH)), get: |c| int(c.settle.batch_size) },
    Key { name: "settle.mysql_retries", set: |c, v| put(&mut c.settle.mysql_retries, v.int(1..=20)), get: |c| int(c.settle.mysql_retries) },
    Key { name: "settle.retry_backoff_ms", set: |c, v| put(&mut c.settle.retry_backoff_ms, v.int(0..=60_000u32).map(u64::from)), get: |c| int(c.settle.retry_backoff_ms) },
    // The MySQL pool holds 8 connections: the run's own, and the writers'.
    Key { name: "settle.writers", set: |c, v| put(&mut c.settle.writers, size(v, 1..=6)), get: |c| int(c.settle.writers) },
    Key { name: "journal.enabled", set: |c, v| put(&mut c.journal.enabled, v.boolean()), get: |c| Some(Value::Boolean(c.journal.enabled)) },
    // At least the day being recovered; at most a year of stream on the broker's disk.
    Key { name: "journal.max_age_days", set: |c, v| put(&mut c.journal.max_age_days, v.int(1..=366)), get: |c| int(c.journal.max_age_days) },
    // Private files (group and others: no access), read once at start; never a secret inline.
    Key { name: "signing.key_file", set: |c, v| put(&mut c.signing.key_file, v.text().map(|p| Some(p.into()))), get: |c| path(&c.signing.key_file) },
    Key { name: "signing.keyring_file", set: |c, v| put(&mut c.signing.keyring_file, v.text().map(|p| Some(p.into()))), get: |c| path(&c.signing.keyring_file) },
    Key { name: "signing.accept_unsigned_until", set: |c, v| put(&mut c.signing.accept_unsigned_until, v.text().and_then(|d| chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").map(Some).map_err(|_| "a date YYYY-MM-DD".to_string()))), get: |c| c.signing.accept_unsigned_until.and_then(|d| text(&d.to_string())) },
    Key { name: "signing.accept_v1_signatures_until", set: |c, v| put(&mut c.signing.accept_v1_signatures_until, v.text().and_then(|d| chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").map(Some).map_err(|_| "a date YYYY-MM-DD".to_string()))), get: |c| c.signing.accept_v1_signatures_until.and_then(|d| text(&d.to_string())) },
];

/// The key of this name.
pub(crate) fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name)
}

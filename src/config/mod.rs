//! The one configuration of every command: defaults, then a TOML file, then `ATTENDANCE_*`
//! environment variables, then command-line flags. Validated once; every error names its key.
//! Every key and its bounds are in one table, `config/settable.rs`.

use std::fmt;
use std::path::PathBuf;

use crate::error::{redact, Error};
use chrono_tz::Tz;

mod environment;
mod file;
pub(crate) mod rulebook;
mod secrets;
mod settable;
mod show;
mod signing;
mod tls;
mod urls;
use settable::Raw;

// The rules are the domain's; the configuration only fills them in (so the domain never
// reaches up into the edge). Re-exported because `Config` carries one.
pub use crate::domain::day::policy::Policy;
pub use environment::check as check_environment;
pub(crate) use environment::unknown as unknown_variables;
pub(crate) use secrets::PasswordFiles;
pub(crate) use settable::MAX_BATCH_ROWS;
pub(crate) use show::{file_origin, settings, to_toml};

/// Every setting's environment variable and the key it sets, in the table's order.
pub(crate) fn variables() -> Vec<(String, &'static str)> {
    settable::KEYS.iter().map(|k| (k.env_var(), k.name)).collect()
}
pub(crate) use signing::SigningSettings;
pub(crate) use tls::{ca_file, is_refused_certificate, refused_certificate};
pub use urls::redis_cluster_seeds;
pub(crate) use urls::{database_of, mysql_tls, REDIS_CLUSTER_SCHEME, REDIS_CLUSTER_TLS_SCHEME};

pub(crate) const DEFAULT_REDIS_URL: &str = "redis://127.0.0.1:6379/";
pub(crate) const DEFAULT_MYSQL_URL: &str = "mysql://root@127.0.0.1:3306/attendance";
pub(crate) const DEFAULT_AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
pub(crate) const DEFAULT_NAMESPACE: &str = "att";

/// Values given on the command line or in the environment (clap reads both); `None` = not given.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub config_file: Option<PathBuf>,
    pub redis_url: Option<String>,
    pub mysql_url: Option<String>,
    pub report_mysql_url: Option<String>,
    pub amqp_url: Option<String>,
    pub namespace: Option<String>,
    pub timezone: Option<String>,
    /// The keys above given as flags (the rest came from clap's environment variables).
    pub on_command_line: Vec<&'static str>,
}

/// Kind of RabbitMQ queue for the department queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueType {
    Quorum,
    Classic,
}

/// Notification settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AmqpSettings {
    pub queue_type: QueueType,
    /// Deliveries a message gets before it is parked.
    pub max_retries: u32,
    /// Back-off before a rejected message goes back to its department queue.
    pub retry_delay_ms: u32,
    /// Outstanding publisher confirms in bulk publishing. At most 10,000: unconfirmed events sit
    /// in amiquip's write buffer while a broker is silent, and past its 16 MiB high-water mark a
    /// publish would block with no timeout; 10,000 events of about 500 bytes stay well below it,
    /// so the confirm timeout alone bounds a stalled publish.
    pub confirm_window: usize,
    /// Connections a bulk check-in publishes on at once, each draining its share of the
    /// departments with its own confirm window (default: the machine's cores, at most 4).
    pub publishers: usize,
    /// How long opening a connection to the broker may take before it counts as unreachable.
    pub connect_timeout_ms: u32,
    /// Once the broker has answered the handshake, how long its verdict on the login may take:
    /// RabbitMQ holds a refused login about 3 s before it closes the connection, longer than
    /// the connect timeout, and only its closing says "refused" (a broker out of file handles
    /// never answers at all).
    pub login_timeout_ms: u32,
    /// How long to wait for the broker to confirm a publish before the event stays pending.
    pub confirm_timeout_ms: u32,
    /// The same, for the one event of a single check-in: a kiosk must not hang on a slow
    /// broker. A confirm later than this leaves the event in the outbox (relay resends it).
    pub checkin_confirm_ms: u32,
    /// After a connection to the broker is lost, `relay` and bulk check-in publish again the
    /// events it confirmed in this many seconds before the loss (0: none), since a broker node
    /// that dies may not have kept what it had just confirmed (docs/durability.md).
    pub republish_horizon_seconds: u32,
    /// How long closing a connection may wait for the broker's Close-Ok before the socket is
    /// simply dropped (every event was confirmed or stays in its outbox, so nothing is lost).
    pub close_timeout_ms: u32,
    /// Heartbeat interval proposed to the broker: a connection that hears nothing for two of
    /// them is closed, which is how a live `watch-dept` notices a broker gone silent.
    pub heartbeat_secs: u16,
    /// The broker's management API (`http://user:pass@host:15672`), read by `doctor` for the
    /// nodes' file handles. None: that check is skipped.
    pub management_url: Option<String>,
    /// A single check-in hands its event to a live `relay --follow` (through Redis) instead of
    /// publishing it itself; off: every check-in opens its own broker connection.
    pub handoff: bool,
    /// Also publish every event to the topic exchange `<ns>.events` (routing key
    /// `<dept>.<kind>`), for other teams' queues; it costs the broker about one more message per
    /// event, so it is off unless someone binds there. Department queues and the journal never
    /// depend on it.
    pub events_exchange: bool,
    /// The notifying commands (`checkin`, `relay`, `watch-dept`) declare the queues and
    /// exchanges they use before using them; off: they use what is there, so that their
    /// account needs no configure permission (the owner declares, with `queues declare` and
    /// `init-day`; docs/security.md).
    pub declare: bool,
    /// Most events a department queue keeps (0: no length limit); past it the oldest go.
    /// Applied as a broker policy, not a queue argument (docs/notifications.md#bounded-queues).
    pub queue_max_length: u32,
    /// Hours an event may wait in a department queue (0: no age limit); older ones go.
    pub queue_max_age_hours: u32,
}

impl Default for AmqpSettings {
    fn default() -> Self {
        AmqpSettings {
            queue_type: QueueType::Quorum,
            max_retries: 5,
            retry_delay_ms: 5_000,
            confirm_window: 1_000,
            publishers: std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
            connect_timeout_ms: 2_000,
            login_timeout_ms: 5_000,
            confirm_timeout_ms: 5_000,
            checkin_confirm_ms: 1_000,
            republish_horizon_seconds: 10,
            close_timeout_ms: 500,
            heartbeat_secs: 20,
            management_url: None,
            handoff: true,
            events_exchange: false,
            declare: true,
            queue_max_length: 0,
            queue_max_age_hours: 48,
        }
    }
}

/// The event journal: a RabbitMQ stream bound to the events exchange, read by `recover`.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalSettings {
    /// Declare and bind the journal (off: events reach the department queues only).
    pub enabled: bool,
    /// Retention (`x-max-age`): how many days back `recover` can rebuild a day.
    pub max_age_days: u32,
}

impl Default for JournalSettings {
    fn default() -> Self {
        JournalSettings {
            enabled: true,
            max_age_days: 31,
        }
    }
}

/// How far a check-in's board write must have travelled before the check-in is acknowledged:
/// to `min_replicas_acked` Redis replicas, waited for at most `wait_timeout_ms` (Redis `WAIT`
/// on the board's node). A master that dies before its replica has a write loses it when the
/// replica is promoted; a punch not known to be replicated says so, and the kiosk punches again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replication {
    /// 0: acknowledged once the master has it (a single Redis with no replica).
    pub min_replicas_acked: u32,
    pub wait_timeout_ms: u32,
}

impl Default for Replication {
    fn default() -> Self {
        Replication {
            min_replicas_acked: 0,
            wait_timeout_ms: 500,
        }
    }
}

/// Settle settings.
#[derive(Debug, Clone, PartialEq)]
pub struct SettleSettings {
    /// Rows per multi-row upsert.
    pub batch_size: usize,
    /// Attempts to reach MySQL before giving up (exit 3).
    pub mysql_retries: u32,
    /// Pause before the second attempt; each later pause doubles it.
    pub retry_backoff_ms: u64,
    /// Connections writing batches at once.
    pub writers: usize,
}

impl Default for SettleSettings {
    fn default() -> Self {
        SettleSettings {
            // One commit (and its log flush) per 5,000 rows: at 1M, 1,000 a batch took 2.5x as long.
            batch_size: 5_000,
            mysql_retries: 4,
            retry_backoff_ms: 1_000,
            writers: 2,
        }
    }
}

/// Network waits on a Redis or MySQL server: a server that accepts the connection and then
/// stops answering becomes an error (exit 3) after these, never a hang.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoTimeouts {
    /// Opening the TCP connection (and, for Redis, its handshake).
    pub connect_timeout_ms: u32,
    /// Waiting for any one reply (a query's result, a pipeline's replies).
    pub read_timeout_ms: u32,
    /// Handing one request to the server's socket.
    pub write_timeout_ms: u32,
}

impl IoTimeouts {
    /// Redis answers in microseconds: a reply 10 s late means a stalled server.
    pub const REDIS: IoTimeouts = IoTimeouts {
        connect_timeout_ms: 3_000,
        read_timeout_ms: 10_000,
        write_timeout_ms: 10_000,
    };
    /// MySQL runs reports over months of rows: give a query half a minute.
    pub const MYSQL: IoTimeouts = IoTimeouts {
        connect_timeout_ms: 3_000,
        read_timeout_ms: 30_000,
        write_timeout_ms: 30_000,
    };

    pub fn connect(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.connect_timeout_ms))
    }
    pub fn read(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.read_timeout_ms))
    }
    pub fn write(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.write_timeout_ms))
    }
}

#[derive(Clone, PartialEq)]
pub struct Config {
    pub redis_url: String,
    pub mysql_url: String,
    /// Where `report` reads (a replica); `None`: the main database.
    pub report_mysql_url: Option<String>,
    pub amqp_url: String,
    pub namespace: String,
    /// The company's name, for report titles ("" for none).
    pub company: String,
    pub timezone: Tz,
    /// The built-in defaults the rulebook is laid over (`ops::lookup::Rules`): a day is judged
    /// by the rulebook's version of it. A file's or the environment's policy values land here
    /// only for `migrate` to import them; every other command refuses them.
    pub policy: Policy,
    pub amqp: AmqpSettings,
    pub settle: SettleSettings,
    pub journal: JournalSettings,
    pub redis: IoTimeouts,
    /// `redis.min_replicas_acked` and `redis.wait_timeout_ms`.
    pub replication: Replication,
    pub mysql: IoTimeouts,
    /// Files the URLs' passwords are read from (config/secrets.rs), already applied.
    pub password_files: PasswordFiles,
    /// The config file read, if any (named, or found where admins look).
    pub file: Option<PathBuf>,
    /// The signing key and the verifiers' keyring (config/signing.rs).
    pub signing: SigningSettings,
    /// Where each key set by a layer got its value (`file PATH`, `ATTENDANCE_X`, ...), so that
    /// an error found once the layers are merged names it; a key not here is a default.
    pub sources: Sources,
}

/// Each key's source, as its errors say it. Not part of a configuration's value: two
/// configurations that hold the same settings are equal wherever they came from.
#[derive(Debug, Clone, Default)]
pub struct Sources(std::collections::BTreeMap<&'static str, String>);

impl PartialEq for Sources {
    fn eq(&self, _: &Sources) -> bool {
        true
    }
}

impl Sources {
    pub(crate) fn set(&mut self, key: &'static str, source: &str) {
        self.0.insert(key, source.to_string());
    }

    /// The policy keys a file or the environment gave, with where from: refused by every
    /// command but `migrate`, which imports them once into the rulebook.
    pub(crate) fn policy_given(&self) -> Vec<(&'static str, String)> {
        self.0
            .iter()
            .filter(|(k, _)| rulebook::is_policy_key(k))
            .map(|(k, v)| (*k, v.clone()))
            .collect()
    }

    /// `key (its source)`, or `key (default)`.
    fn named(&self, key: &str) -> String {
        format!("{key} ({})", self.0.get(key).map_or("default", String::as_str))
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("file", &self.file)
            .field("redis_url", &redact(&self.redis_url))
            .field("mysql_url", &redact(&self.mysql_url))
            .field("report_mysql_url", &self.report_mysql_url.as_deref().map(redact))
            .field(
                "amqp_url",
                &self.amqp_urls().into_iter().map(redact).collect::<Vec<_>>(),
            )
            .field("namespace", &self.namespace)
            .field("company", &self.company)
            .field("timezone", &self.timezone)
            .field("policy", &self.policy)
            .field(
                "amqp",
                &AmqpSettings {
                    management_url: self.amqp.management_url.as_deref().map(redact),
                    ..self.amqp.clone()
                },
            )
            .field("settle", &self.settle)
            .field("journal", &self.journal)
            .field("redis", &self.redis)
            .field("replication", &self.replication)
            .field("mysql", &self.mysql)
            .field("password_files", &self.password_files)
            .field("signing", &self.signing)
            .finish()
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            redis_url: DEFAULT_REDIS_URL.into(),
            mysql_url: DEFAULT_MYSQL_URL.into(),
            report_mysql_url: None,
            amqp_url: DEFAULT_AMQP_URL.into(),
            namespace: DEFAULT_NAMESPACE.into(),
            company: String::new(),
            timezone: Tz::UTC,
            policy: Policy::default(),
            amqp: AmqpSettings::default(),
            settle: SettleSettings::default(),
            journal: JournalSettings::default(),
            redis: IoTimeouts::REDIS,
            replication: Replication::default(),
            mysql: IoTimeouts::MYSQL,
            password_files: PasswordFiles::default(),
            file: None,
            signing: SigningSettings::default(),
            sources: Sources::default(),
        }
    }
}

impl Config {
    /// `key (where its value came from)`, e.g. `mysql_url (file /etc/attendance/config.toml)`,
    /// for an error about the key found after loading (a store's client refusing its URL).
    pub(crate) fn named(&self, key: &str) -> String {
        self.sources.named(key)
    }

    /// A merged value refused: the key, where its value came from, the value (redacted) and
    /// what was expected.
    fn bad(&self, key: &str, value: &str, expected: &str) -> Error {
        Error::input(format!(
            "config: {}: invalid value '{}' ({expected})",
            self.sources.named(key),
            redact(value)
        ))
    }

    /// A rule between keys broken: `what`, with `{key}` replaced by each key and its source.
    fn clash(&self, what: &str, keys: &[&str]) -> Error {
        let mut line = what.to_string();
        for key in keys {
            line = line.replacen(&format!("{{{key}}}"), &self.sources.named(key), 1);
        }
        Error::input(format!("config: {line}"))
    }
}

impl Config {
    /// Defaults, then the file (`--config` / `ATTENDANCE_CONFIG`, else the first of
    /// [`file::default_file`]'s places that holds one), then the environment, then flags.
    pub fn load(o: &Overrides) -> Result<Config, Error> {
        let mut o = o.clone();
        if o.config_file.is_none() {
            o.config_file = file::default_file(|name| std::env::var_os(name))?;
        }
        Config::load_with_env(&o, |name| std::env::var(name).ok())
    }

    /// [`Config::load`] with the environment given (tests pass their own).
    pub fn load_with_env(o: &Overrides, env: impl Fn(&str) -> Option<String>) -> Result<Config, Error> {
        let mut c = Config::default();
        if let Some(path) = &o.config_file {
            c.apply_file(path)?;
            c.file = Some(path.clone());
        }
        for key in settable::KEYS {
            let var = key.env_var();
            if let Some(v) = env(&var) {
                key.apply(&mut c, &Raw::Env(v), &var)?;
            }
        }
        c.apply_overrides(o)?;
        c.password_files.clone().apply(&mut c)?;
        c.validate()?;
        c.signing.validate()?;
        Ok(c)
    }

    /// What clap read from a flag or its environment variable (a flag wins over the variable).
    fn apply_overrides(&mut self, o: &Overrides) -> Result<(), Error> {
        for (name, value) in [
            ("redis_url", &o.redis_url),
            ("mysql_url", &o.mysql_url),
            ("report_mysql_url", &o.report_mysql_url),
            ("amqp_url", &o.amqp_url),
            ("namespace", &o.namespace),
            ("timezone", &o.timezone),
        ] {
            if let (Some(v), Some(key)) = (value, settable::find(name)) {
                let origin = format!("{} or --{}", key.env_var(), name.replace('_', "-"));
                key.apply(self, &Raw::Env(v.clone()), &origin)?;
            }
        }
        Ok(())
    }

    fn validate(&self) -> Result<(), Error> {
        let ns = &self.namespace;
        if ns.is_empty()
            || ns.len() > 32
            || !ns
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        {
            return Err(self.bad("namespace", ns, "1 to 32 of a-z, 0-9, '_' and '-'"));
        }
        for (key, url, schemes) in [
            (
                "redis_url",
                &self.redis_url[..],
                &[
                    "redis",
                    "rediss",
                    "redis+unix",
                    "unix",
                    REDIS_CLUSTER_SCHEME,
                    REDIS_CLUSTER_TLS_SCHEME,
                ][..],
            ),
            ("mysql_url", &self.mysql_url[..], &["mysql"][..]),
            ("report_mysql_url", self.report_mysql_url(), &["mysql"][..]),
            (
                "amqp_url",
                self.amqp_urls().first().copied().unwrap_or(""),
                &["amqp", "amqps"][..],
            ),
        ] {
            let scheme = url.split("://").next().unwrap_or("");
            if !url.contains("://") || !schemes.contains(&scheme) {
                return Err(self.bad(key, url, &format!("a URL starting with {}://", schemes[0])));
            }
        }
        if self.redis_url.contains("+cluster://") && redis_cluster_seeds(&self.redis_url).is_none() {
            return Err(self.bad(
                "redis_url",
                &self.redis_url,
                "a cluster's seed nodes as redis+cluster://host:port,host:port (rediss+cluster:// for TLS)",
            ));
        }
        // Every broker of a list, not only the first.
        for url in self.amqp_urls() {
            if !url.starts_with("amqp://") && !url.starts_with("amqps://") {
                return Err(self.bad("amqp_url", url, "a URL starting with amqp:// (amqps:// for TLS)"));
            }
            // RabbitMQ refuses an empty password: such a URL can only fail, 3 s later, at every
            // command (a password file, if set, is in the URL by now).
            if let Some(user) = user_without_password(url) {
                return Err(self.clash(
                    &format!(
                        "{{amqp_url}} names the user '{user}' but no password, which RabbitMQ refuses: \
                         put the password in a file named by amqp_password_file (or in the URL)"
                    ),
                    &["amqp_url"],
                ));
            }
        }
        for (key, url) in [
            ("mysql_url", &self.mysql_url[..]),
            ("report_mysql_url", self.report_mysql_url()),
        ] {
            if let Err(why) = mysql_tls(url) {
                return Err(self.bad(key, url, &why));
            }
            if database_of(url).is_none() {
                return Err(self.bad(key, url, "the URL must name a database, as in mysql://host/attendance"));
            }
        }
        if self.uses_tls() {
            ca_file()?;
        }
        self.check_policy()?;
        let r = self.replication;
        if r.min_replicas_acked > 0 && r.wait_timeout_ms >= self.redis.read_timeout_ms {
            return Err(self.clash(
                "{redis.wait_timeout_ms} must be shorter than {redis.read_timeout_ms} (WAIT holds its reply that long)",
                &["redis.wait_timeout_ms", "redis.read_timeout_ms"],
            ));
        }
        Ok(())
    }

    /// The rules between policy keys (a file's, or the rulebook's on a date).
    pub(crate) fn check_policy(&self) -> Result<(), Error> {
        if self.policy.checkout_from <= self.policy.checkin_deadline {
            return Err(self.clash(
                "{policy.checkout_from} must be later than {policy.checkin_deadline}",
                &["policy.checkout_from", "policy.checkin_deadline"],
            ));
        }
        if let Some(split) = self.policy.auto_kind_split {
            if split <= self.policy.checkin_deadline || split > self.policy.checkout_from {
                return Err(self.clash(
                    "{policy.auto_kind_split} must be later than {policy.checkin_deadline} and no later than {policy.checkout_from}",
                    &["policy.auto_kind_split", "policy.checkin_deadline", "policy.checkout_from"],
                ));
            }
        }
        if self.policy.work_days.is_empty() {
            return Err(self.clash("{policy.work_days}: at least one day is needed", &["policy.work_days"]));
        }
        Ok(())
    }

    /// The brokers `amqp_url` names, in the order a command tries them (a cluster's nodes, or
    /// one broker).
    pub fn amqp_urls(&self) -> Vec<&str> {
        self.amqp_url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect()
    }

    /// The database named in the MySQL URL.
    pub fn mysql_database(&self) -> Option<String> {
        database_of(&self.mysql_url)
    }

    /// The URL `report` reads from: `report_mysql_url` (a replica), else the main one. Reports
    /// only read, so a replica's lag of a few seconds is all they can see differently.
    pub fn report_mysql_url(&self) -> &str {
        self.report_mysql_url.as_deref().unwrap_or(&self.mysql_url)
    }

    /// The MySQL URL without its database, to create the database itself.
    /// Whether any store is reached over TLS (then `SSL_CERT_FILE`, if set, must be good).
    fn uses_tls(&self) -> bool {
        let mysql_tls_url =
            |url: &str| mysql_tls(url).is_ok_and(|(rest, tls)| tls.unwrap_or(rest.contains("root_cert_path=")));
        self.redis_url.starts_with("rediss")
            || self.amqp_urls().iter().any(|u| u.starts_with("amqps://"))
            || mysql_tls_url(&self.mysql_url)
            || mysql_tls_url(self.report_mysql_url())
    }

    pub fn mysql_server_url(&self) -> String {
        let (scheme, after) = self.mysql_url.split_once("://").unwrap_or(("mysql", &self.mysql_url));
        let (auth_host, rest) = after.split_once('/').unwrap_or((after, ""));
        let query = rest.split_once('?').map(|(_, q)| format!("?{q}")).unwrap_or_default();
        format!("{scheme}://{auth_host}/{query}")
    }
}

/// The user of a URL whose user information has no password (`amqp://ann@host/`).
fn user_without_password(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
    let (userinfo, _) = authority.rsplit_once('@')?;
    (!userinfo.is_empty() && !userinfo.contains(':')).then_some(userinfo)
}

fn parse_tz(v: &str) -> Result<Tz, String> {
    v.parse::<Tz>()
        .map_err(|_| "an IANA time zone such as Europe/Paris".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveTime, Weekday};

    fn with_file(text: &str) -> Result<Config, Error> {
        let dir = std::env::temp_dir().join(format!("att-cfg-{}", uuid::Uuid::new_v4()));
        std::fs::write(&dir, text).unwrap();
        // Private, as a file with passwords must be (config/secrets.rs).
        let private = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
        std::fs::set_permissions(&dir, private).unwrap();
        let o = Overrides {
            config_file: Some(dir.clone()),
            ..Default::default()
        };
        let r = Config::load_with_env(&o, |_| None);
        std::fs::remove_file(dir).ok();
        r
    }

    #[test]
    fn defaults_point_at_local_services() {
        let c = Config::load(&Overrides::default()).unwrap();
        assert_eq!(c.namespace, "att");
        assert_eq!(c.mysql_database().as_deref(), Some("attendance"));
        assert_eq!(c.mysql_server_url(), "mysql://root@127.0.0.1:3306/");
    }

    #[test]
    fn file_then_overrides() {
        let c = with_file("namespace = \"acme\"\ntimezone = \"Asia/Tokyo\"\n[policy]\ngrace_minutes = 5\nwork_days = [\"mon\", \"sat\"]\n").unwrap();
        assert_eq!(c.namespace, "acme");
        assert_eq!(c.timezone, chrono_tz::Asia::Tokyo);
        assert_eq!(c.policy.grace_minutes, 5);
        assert_eq!(c.policy.work_days, vec![Weekday::Mon, Weekday::Sat]);
    }

    #[test]
    fn the_auto_kind_split_defaults_to_the_midpoint_and_stays_inside_the_day() {
        let t = |h, m| NaiveTime::from_hms_opt(h, m, 0).unwrap();
        assert_eq!(with_file("").unwrap().policy.auto_kind_split(), t(13, 30));
        let c = with_file("[policy]\ncheckin_deadline = \"08:00\"\ncheckout_from = \"16:00\"\n").unwrap();
        assert_eq!(c.policy.auto_kind_split(), t(12, 0));
        let c = with_file("[policy]\nauto_kind_split = \"12:15\"\n").unwrap();
        assert_eq!(c.policy.auto_kind_split(), t(12, 15));
        for at in ["09:00", "08:00", "18:01"] {
            let e = with_file(&format!("[policy]\nauto_kind_split = \"{at}\"\n"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("policy.auto_kind_split"), "{at}: {e}");
        }
        assert!(with_file("[policy]\nauto_kind_split = \"18:00\"\n").is_ok());
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = with_file("[policy]\ncheckin_deadline = \"9h\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("policy.checkin_deadline"), "{e}");
        let e = with_file("timezone = \"Mars/Base\"\n").unwrap_err().to_string();
        assert!(e.contains("timezone"), "{e}");
        for (text, key) in [
            ("[settle]\nwriters = 9\n", "settle.writers"),
            ("[amqp]\nconfirm_window = 0\n", "amqp.confirm_window"),
            ("[amqp]\nretry_delay_ms = 0\n", "amqp.retry_delay_ms"),
            ("[policy]\ngrace_minutes = 241\n", "policy.grace_minutes"),
        ] {
            let e = with_file(text).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
        assert_eq!(with_file("[settle]\nwriters = 6\n").unwrap().settle.writers, 6);
        let e = with_file("colour = 1\n").unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
        let e = Config::load(&Overrides {
            namespace: Some("Bad NS".into()),
            ..Default::default()
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("namespace"), "{e}");
    }

    #[test]
    fn amqp_keys_are_checked() {
        let c = with_file(
            "[amqp]\nqueue_type = \"classic\"\nretry_delay_ms = 100\nmax_retries = 2\ncheckin_confirm_ms = 300\n",
        )
        .unwrap();
        assert_eq!(c.amqp.queue_type, QueueType::Classic);
        assert_eq!(
            (c.amqp.retry_delay_ms, c.amqp.max_retries, c.amqp.checkin_confirm_ms),
            (100, 2, 300)
        );
        for (text, key) in [
            ("[amqp]\nmax_retries = 0\n", "amqp.max_retries"),
            ("[amqp]\nretry_delay_ms = 0\n", "amqp.retry_delay_ms"),
            ("[amqp]\nconnect_timeout_ms = 0\n", "amqp.connect_timeout_ms"),
            ("[amqp]\nqueue_type = \"stream\"\n", "amqp.queue_type"),
        ] {
            let e = with_file(text).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
    }

    #[test]
    fn every_key_is_settable_from_the_environment_and_env_beats_the_file() {
        let env = |name: &str| {
            let v = match name {
                "ATTENDANCE_SETTLE_BATCH_SIZE" => "500",
                "ATTENDANCE_POLICY_WORK_DAYS" => "mon, sat",
                "ATTENDANCE_POLICY_CHECKIN_DEADLINE" => "08:30",
                "ATTENDANCE_AMQP_QUEUE_TYPE" => "classic",
                "ATTENDANCE_NAMESPACE" => "fromenv",
                "ATTENDANCE_AMQP_MANAGEMENT_URL" => "http://mon:pw@127.0.0.1:15672",
                _ => return None,
            };
            Some(v.to_string())
        };
        let dir = std::env::temp_dir().join(format!("att-cfg-{}", uuid::Uuid::new_v4()));
        std::fs::write(
            &dir,
            "namespace = \"fromfile\"\n[settle]\nbatch_size = 200\nwriters = 3\n",
        )
        .unwrap();
        let o = Overrides {
            config_file: Some(dir.clone()),
            ..Default::default()
        };
        let c = Config::load_with_env(&o, env).unwrap();
        std::fs::remove_file(dir).ok();
        assert_eq!((c.settle.batch_size, c.settle.writers), (500, 3));
        assert_eq!(c.policy.work_days, vec![Weekday::Mon, Weekday::Sat]);
        assert_eq!(c.policy.checkin_deadline, NaiveTime::from_hms_opt(8, 30, 0).unwrap());
        assert_eq!(c.amqp.queue_type, QueueType::Classic);
        assert_eq!(c.namespace, "fromenv");
        assert_eq!(c.amqp.management_url.as_deref(), Some("http://mon:pw@127.0.0.1:15672"));
        assert!(
            !format!("{c:?}").contains(":pw@"),
            "the management password is redacted"
        );
        // A flag (or clap's own env) wins over the rest.
        let o = Overrides {
            namespace: Some("fromflag".into()),
            ..Default::default()
        };
        assert_eq!(Config::load_with_env(&o, env).unwrap().namespace, "fromflag");
        // Every key has its variable, named after it.
        assert!(settable::KEYS
            .iter()
            .any(|k| k.env_var() == "ATTENDANCE_AMQP_CHECKIN_CONFIRM_MS"));
        let vars: std::collections::HashSet<String> = settable::KEYS.iter().map(settable::Key::env_var).collect();
        assert_eq!(vars.len(), settable::KEYS.len(), "two keys share a variable");
    }

    #[test]
    fn bounded_keys_are_refused_out_of_bounds_never_clamped() {
        for (text, key) in [
            ("[settle]\nbatch_size = 7282\n", "settle.batch_size"),
            ("[settle]\nbatch_size = 10000\n", "settle.batch_size"),
            (
                "[policy]\nrepeat_window_minutes = 241\n",
                "policy.repeat_window_minutes",
            ),
            ("[policy]\nmax_future_skew_secs = 3601\n", "policy.max_future_skew_secs"),
            ("[policy]\ngrace_minutes = -1\n", "policy.grace_minutes"),
            ("[policy]\ngrace_minutes = \"5\"\n", "policy.grace_minutes"),
            ("[amqp]\nconfirm_window = 100001\n", "amqp.confirm_window"),
            ("[nosuch]\nkey = 1\n", "nosuch.key"),
        ] {
            let e = with_file(text).unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        assert_eq!(
            with_file("[settle]\nbatch_size = 7281\n").unwrap().settle.batch_size,
            7281
        );
        let env = |name: &str| (name == "ATTENDANCE_POLICY_MAX_FUTURE_SKEW_SECS").then(|| "lots".to_string());
        let e = Config::load_with_env(&Overrides::default(), env)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("policy.max_future_skew_secs (ATTENDANCE_POLICY_MAX_FUTURE_SKEW_SECS)")
                && e.contains("0 to 3600"),
            "{e}"
        );
    }

    #[test]
    fn backdating_and_journal_keys_from_the_file_and_the_environment() {
        let c = with_file("[policy]\nmax_backdate_days = 3\n[journal]\nenabled = false\nmax_age_days = 60\n").unwrap();
        assert_eq!(c.policy.max_backdate_days, 3);
        assert_eq!(
            c.journal,
            JournalSettings {
                enabled: false,
                max_age_days: 60
            }
        );
        assert_eq!(Config::default().policy.max_backdate_days, 7);
        for (text, key) in [
            ("[policy]\nmax_backdate_days = 3661\n", "policy.max_backdate_days"),
            ("[journal]\nmax_age_days = 0\n", "journal.max_age_days"),
            ("[journal]\nenabled = \"maybe\"\n", "journal.enabled"),
        ] {
            let e = with_file(text).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
        let env = |k: &str| match k {
            "ATTENDANCE_POLICY_MAX_BACKDATE_DAYS" => Some("2".to_string()),
            "ATTENDANCE_JOURNAL_ENABLED" => Some("off".to_string()),
            _ => None,
        };
        let c = Config::load_with_env(&Overrides::default(), env).unwrap();
        assert_eq!((c.policy.max_backdate_days, c.journal.enabled), (2, false));
    }

    #[test]
    fn a_broker_list_is_a_toml_array_or_comma_separated_and_each_url_is_checked() {
        let c = with_file("amqp_url = [\"amqp://a:pw1@n1:5672/%2f\", \"amqp://a:pw2@n2/%2f\"]\n").unwrap();
        assert_eq!(c.amqp_urls(), ["amqp://a:pw1@n1:5672/%2f", "amqp://a:pw2@n2/%2f"]);
        let debug = format!("{c:?}");
        assert!(
            !debug.contains("pw1") && !debug.contains("pw2") && debug.contains("@n2/"),
            "{debug}"
        );
        let env = |k: &str| (k == "ATTENDANCE_AMQP_URL").then(|| "amqp://n1/, amqp://n2/".to_string());
        let c = Config::load_with_env(&Overrides::default(), env).unwrap();
        assert_eq!(c.amqp_urls(), ["amqp://n1/", "amqp://n2/"]);
        assert_eq!(Config::default().amqp_urls(), [DEFAULT_AMQP_URL]);
        for text in [
            "amqp_url = []\n",
            "amqp_url = [1]\n",
            "amqp_url = \"amqp://n1/,redis://u:pw3@n2/\"\n",
            "amqp_url = \",\"\n",
        ] {
            let e = with_file(text).unwrap_err().to_string();
            assert!(e.contains("amqp_url") && !e.contains("pw3"), "{text}: {e}");
        }
    }

    #[test]
    fn debug_redacts_passwords() {
        let c = Config {
            amqp_url: "amqp://u:topsecret@h:5672/%2f".into(),
            ..Config::default()
        };
        assert!(!format!("{c:?}").contains("topsecret"));
    }

    #[test]
    fn timeout_keys_are_bounded_and_named() {
        let c = with_file("[redis]\nread_timeout_ms = 250\n[mysql]\nconnect_timeout_ms = 500\n").unwrap();
        assert_eq!(c.redis.read_timeout_ms, 250);
        assert_eq!(c.redis.connect_timeout_ms, IoTimeouts::REDIS.connect_timeout_ms);
        assert_eq!(c.mysql.connect_timeout_ms, 500);
        assert_eq!(c.mysql.read_timeout_ms, IoTimeouts::MYSQL.read_timeout_ms);
        let c = with_file("[redis]\nmin_replicas_acked = 1\nwait_timeout_ms = 200\n").unwrap();
        assert_eq!(
            c.replication,
            Replication {
                min_replicas_acked: 1,
                wait_timeout_ms: 200
            }
        );
        for (text, key) in [
            ("[redis]\nread_timeout_ms = 0\n", "redis.read_timeout_ms"),
            ("[mysql]\nwrite_timeout_ms = 600001\n", "mysql.write_timeout_ms"),
            ("[amqp]\nclose_timeout_ms = 0\n", "amqp.close_timeout_ms"),
            ("[amqp]\nheartbeat_secs = 0\n", "amqp.heartbeat_secs"),
            ("[amqp]\nconfirm_window = 10001\n", "amqp.confirm_window"),
            ("[redis]\nidle_ms = 5\n", "idle_ms"),
            ("[redis]\nmin_replicas_acked = 17\n", "redis.min_replicas_acked"),
            ("[redis]\nwait_timeout_ms = 0\n", "redis.wait_timeout_ms"),
            // WAIT holds its reply: past the read timeout, the wait would read as a dead Redis.
            (
                "[redis]\nmin_replicas_acked = 1\nwait_timeout_ms = 250\nread_timeout_ms = 250\n",
                "redis.wait_timeout_ms",
            ),
        ] {
            let e = with_file(text).unwrap_err().to_string();
            assert!(e.contains(key), "{e}");
        }
        // The environment sets them too, through the same table.
        let c = Config::load_with_env(&Overrides::default(), |v| {
            (v == "ATTENDANCE_MYSQL_READ_TIMEOUT_MS").then(|| "1500".to_string())
        })
        .unwrap();
        assert_eq!(c.mysql.read_timeout_ms, 1_500);
    }
}

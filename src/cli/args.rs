//! The command line: clap types only. A field's doc comment is its `--help` text.

use std::path::PathBuf;

use chrono::NaiveDate;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;
use crate::domain::dates::{parse_day, parse_month, parse_typed_time, TypedTime};
use crate::domain::day::policy::DayStatus;
use crate::domain::day::workdays::DayKind;
use crate::domain::people::accounts::Role;
use crate::domain::punch::Kind;
use crate::domain::report::table::Format;

/// The help heading of the options that say where the stores are, apart from each command's own.
const CONNECTION: &str = "Connection";

/// `--version`: the release and the git commit it was built from (build.rs; "unknown" when
/// built outside a git checkout).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("BUILD_GIT_COMMIT"), ")");

#[derive(Debug, Parser)]
#[command(
    name = "attendance",
    version = VERSION,
    about = "Daily attendance on Redis, RabbitMQ and MySQL: check-ins, supervisors' notifications, nightly settle, reports",
    after_help = "Exit codes: 0 done, 1 refused by a rule, 2 bad usage or input, 3 a service unreachable, 4 done but some items refused or failed, 5 an internal or I/O failure, 6 the day looks lost in Redis (recover first)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    #[command(subcommand)]
    pub command: Command,
}

/// Connection and output flags shared by every command (connection ones under their own heading).
#[derive(Debug, Args, Clone)]
pub struct GlobalOpts {
    /// TOML config file [default: $XDG_CONFIG_HOME/attendance/config.toml, else
    /// /etc/attendance/config.toml, the first that exists]
    #[arg(long, global = true, env = "ATTENDANCE_CONFIG", value_name = "FILE", help_heading = CONNECTION)]
    pub config: Option<PathBuf>,
    /// Redis URL [default: redis://127.0.0.1:6379/]
    #[arg(
        long,
        global = true,
        help_heading = CONNECTION,
        env = "ATTENDANCE_REDIS_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub redis_url: Option<String>,
    /// MySQL URL with the database [default: mysql://root@127.0.0.1:3306/attendance]
    #[arg(
        long,
        global = true,
        help_heading = CONNECTION,
        env = "ATTENDANCE_MYSQL_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub mysql_url: Option<String>,
    /// MySQL URL that `report` reads from, e.g. a replica [default: --mysql-url]
    #[arg(
        long,
        global = true,
        env = "ATTENDANCE_REPORT_MYSQL_URL",
        value_name = "URL",
        hide_env_values = true,
        help_heading = CONNECTION,
    )]
    pub report_mysql_url: Option<String>,
    /// RabbitMQ URL [default: amqp://guest:guest@127.0.0.1:5672/%2f]
    #[arg(
        long,
        global = true,
        help_heading = CONNECTION,
        env = "ATTENDANCE_AMQP_URL",
        value_name = "URL",
        hide_env_values = true
    )]
    pub amqp_url: Option<String>,
    /// Prefix of every Redis key and AMQP name [default: att]
    #[arg(long, global = true, env = "ATTENDANCE_NAMESPACE", value_name = "NAME", help_heading = CONNECTION)]
    pub namespace: Option<String>,
    /// The company's IANA time zone, which decides "today" and "09:00" [default: UTC]
    #[arg(long, global = true, env = "ATTENDANCE_TIMEZONE", value_name = "ZONE", help_heading = CONNECTION)]
    pub timezone: Option<String>,
    /// Print nothing on stderr but errors
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Say more on stderr: the effective configuration (passwords hidden) and the time taken
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Which of the options above were given as flags rather than through their variables
    /// (`config show` names the flag as a value's origin); filled by [`parse`].
    #[arg(skip)]
    pub on_command_line: Vec<&'static str>,
}

/// The options of [`GlobalOpts`] that are also config keys (or the config file), by clap id.
const GLOBAL_KEYS: [&str; 7] = [
    "config",
    "redis_url",
    "mysql_url",
    "report_mysql_url",
    "amqp_url",
    "namespace",
    "timezone",
];

/// The command line, with which connection options came as flags and which from the environment.
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args_os().collect())
}

/// [`parse`] of `args` (the program's name first). A kiosk runs one process per punch: for
/// `attendance checkin ...` and `attendance status ...` the parser is built with that command
/// alone (clap builds every command's definition otherwise, a quarter of a check-in process's
/// instructions). Anything it does not take as a success (help, a typo, another command) goes
/// to the whole definition, so messages and help are always the whole one's.
fn parse_from(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
    use clap::CommandFactory;
    if let Some(cli) = one_command(&args) {
        return Ok(cli);
    }
    matched(Cli::command().try_get_matches_from(args)?)
}

/// `checkin` or `status` parsed by a definition that holds only the global options and that
/// command; `None` for anything else, or anything it refuses.
fn one_command(args: &[std::ffi::OsString]) -> Option<Cli> {
    use clap::Args as _;
    let sub = match args.get(1)?.to_str()? {
        "checkin" => CheckinArgs::augment_args(clap::Command::new("checkin")),
        "status" => StatusArgs::augment_args(clap::Command::new("status")),
        _ => return None,
    };
    let cmd = GlobalOpts::augment_args(clap::Command::new("attendance")).subcommand(sub);
    matched(cmd.try_get_matches_from(args).ok()?).ok()
}

fn matched(mut matches: clap::ArgMatches) -> Result<Cli, clap::Error> {
    use clap::{parser::ValueSource, FromArgMatches};
    let given: Vec<&'static str> = GLOBAL_KEYS
        .into_iter()
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .collect();
    let mut cli = Cli::from_arg_matches_mut(&mut matches)?;
    cli.global.on_command_line = given;
    Ok(cli)
}

impl GlobalOpts {
    pub fn overrides(&self) -> Overrides {
        Overrides {
            config_file: self.config.clone(),
            redis_url: self.redis_url.clone(),
            mysql_url: self.mysql_url.clone(),
            report_mysql_url: self.report_mysql_url.clone(),
            amqp_url: self.amqp_url.clone(),
            namespace: self.namespace.clone(),
            timezone: self.timezone.clone(),
            on_command_line: self.on_command_line.clone(),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create the MySQL database if missing and apply the schema migrations
    Migrate,
    /// The roster: import employees and departments, generate a sample roster
    #[command(subcommand)]
    Org(OrgCommand),
    /// Lay out every department's board for a day in Redis (idempotent)
    InitDay(InitDayArgs),
    /// Record a punch (check-in or check-out) for an employee
    Checkin(CheckinArgs),
    /// Show an employee's own state for a day (a settled day: from MySQL)
    Status(StatusArgs),
    /// Publish the events left in the outboxes (the broker was down at check-in time)
    Relay(RelayArgs),
    /// A supervisor's view of one department: its board and each punch as it arrives
    ///
    /// On a terminal, a full-screen board: today's counts, then every late, not-yet-in, in and
    /// out name in columns, scrollable, and the latest events (another day's dated). Keys: l
    /// late, n not yet in, o out, a all; arrows, j/k, PgUp/PgDn, g/G scroll; q, Esc or Ctrl-C
    /// leaves. Piped, or with --json or --once: one line (or JSON object) per event.
    WatchDept(WatchDeptArgs),
    /// The parking queue: notifications that failed too often
    #[command(subcommand)]
    Dlq(DlqCommand),
    /// Rebuild a day's boards from the event journal after Redis lost them (lay the day out,
    /// replay its punches; idempotent; publishes nothing)
    Recover(RecoverArgs),
    /// Write a finished day to MySQL, then clear its boards and lay out the next work day.
    /// Safe to rerun and safe to kill: a rerun gives the same rows. Meant for cron: `30 0 * * *`.
    /// Only punches a signed punch log record backs are settled; a board field or log entry
    /// written to Redis by hand is refused and counted (`refused_punches`).
    Settle(SettleArgs),
    /// The work calendar: holidays and extra work days over the policy's week
    #[command(subcommand)]
    Calendar(CalendarCommand),
    /// The company's rulebook: policy values set from a date on (owner only, audited); every
    /// day is judged by the version in force on it
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Approved leave: an employee on leave is on_leave, never absent
    #[command(subcommand)]
    Leave(LeaveCommand),
    /// Work patterns: named shifts (night shifts included), who follows which from when, and
    /// which applies to an employee on a date
    #[command(subcommand)]
    Shifts(ShiftsCommand),
    /// Kiosk keys: make one (generate), and the registry of public keys that consumers verify
    /// events with (add, revoke with a time, list); the registry is the owner's, audited
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Pay periods: HR closes a month (read-only to corrections, leave, calendar and shift
    /// changes and settle) and reopens it with a reason, audited
    #[command(subcommand)]
    Period(PeriodCommand),
    /// A supervisor fixes a settled day of one of their people (audited; kept by later settles)
    Correct(CorrectArgs),
    /// Decide on a settled day's overtime where the rulebook asks for approval
    /// (policy.overtime_needs_approval): the employee's supervisor or HR approves it, and payroll
    /// counts it, or rejects it, and it counts 0 (audited; until then it is pending)
    #[command(subcommand)]
    Overtime(OvertimeCommand),
    /// A punch on today's board (before settle): void a wrong one (audited, the supervisor told)
    #[command(subcommand)]
    Punch(PunchCommand),
    /// Punches held for review (back-dated past policy.replay_window_minutes by a key that may
    /// not replay offline punches): list them, approve or reject them (audited)
    #[command(subcommand)]
    Review(ReviewCommand),
    /// HR's reports, from MySQL
    #[command(subcommand)]
    Report(ReportCommand),
    /// Write a realistic morning or evening of punches for the roster (demos, benchmarks)
    Simulate(SimulateArgs),
    /// The day's figures from the stores, in Prometheus's text format
    ///
    /// Check-ins recorded and held, notifications pending, parked and queued (the deepest
    /// department queues by name, the rest together), whether each store answered, and the
    /// build. For node_exporter's textfile collector (-o FILE, written whole) or a scrape wrapper.
    Metrics(DayMetricsArgs),
    /// Check that this installation can be trusted: services, schema, persistence, queues, clocks, settle
    ///
    /// One line per check: ok, skip (not checked, and why), warn or fail.
    /// Exit 0 all ok, 4 some warning, 3 some failure.
    Doctor(DoctorArgs),
    /// The namespace's department queues: declare them all, empty them (purge --yes), or delete
    /// them with the exchanges and the journal (delete --yes)
    #[command(subcommand)]
    Queues(QueuesCommand),
    /// Print a shell completion script for bash, zsh, fish, elvish or powershell
    ///
    /// For example `attendance completions bash > /usr/local/share/bash-completion/completions/attendance`.
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into a directory
    Man(ManArgs),
    /// Write the days before a date to CSV files (rows, corrections, settle runs); with
    /// --drop, then delete them from MySQL, all in one transaction
    Archive(ArchiveArgs),
    /// Database upkeep for years of rows: partitioning by month
    #[command(subcommand)]
    Db(DbCommand),
    /// The configuration in force: every key's value and where it came from
    #[command(subcommand)]
    Config(ConfigCommand),
}

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration as TOML, each value followed by where it came from
    /// (default, file PATH, environment VAR, flag --NAME); passwords hidden, password and key
    /// files named but never read into the output
    Show {
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The role this host's MySQL account serves (the trust model of the security guide): its grants are checked
    /// against that role's, and a missing one is a warning with the GRANT to run. Without it,
    /// the roles the grants cover are named (or, covering none, what the closest lacks)
    #[arg(long, value_parser = PossibleValuesParser::new(Role::ALL.map(Role::name)).map(|s| Role::parse(&s).expect("listed")))]
    pub role: Option<Role>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct ArchiveArgs {
    /// Archive the days strictly before this one, YYYY-MM-DD (at most today)
    #[arg(long, value_parser = parse_day)]
    pub before: NaiveDate,
    /// The folder for the CSV files (it must exist and be writable; no file is overwritten)
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub out: PathBuf,
    /// Delete the archived days from MySQL once the files are written and synced
    #[arg(long)]
    pub drop: bool,
    /// Say which files would be written with how many rows, and what --drop would delete;
    /// write, delete and lock nothing
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Subcommand)]
pub enum QueuesCommand {
    /// Declare the exchanges and every roster department's queue now (otherwise each queue is
    /// declared with its department's first event)
    Declare {
        #[command(flatten)]
        output: Output,
    },
    /// Empty every department queue, the retry queue and the parking queue of the namespace
    /// (the notifications waiting there are lost; the queues stay)
    Purge {
        /// Yes, throw the waiting notifications away (without it nothing is purged)
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Delete the namespace's queues and exchanges for good: every department queue of the
    /// roster, retry, parking, the journal (`recover` then has nothing to read) and the
    /// exchanges. For removing a trial or demo namespace; the next command declares them anew
    Delete {
        /// Yes, delete them (without it nothing is deleted)
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write attendance.1 and one attendance-COMMAND.1 per command into this directory
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Partition `attendance` by month (RANGE COLUMNS on work_date), or add months to a
    /// partitioned one. Idempotent: months already there are kept as they are.
    Partition {
        /// The first month with a partition of its own, YYYY-MM; earlier days share one
        #[arg(long, value_name = "YYYY-MM", value_parser = parse_month)]
        from: NaiveDate,
        /// How many months from --from get a partition each (1 to 240)
        #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..=240))]
        months: u32,
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Debug, Args)]
pub struct SettleArgs {
    /// The day, YYYY-MM-DD [default: yesterday and every earlier day that still has boards, oldest first]
    #[arg(long, value_parser = parse_day)]
    pub date: Option<NaiveDate>,
    /// Settle a laid-out day even if some departments have no board in Redis (their people are
    /// written from MySQL's rows, or absent); without it such a day is refused with exit 6
    #[arg(long)]
    pub accept_missing_boards: bool,
    /// Settle the boards as Redis has them, without first restoring from the journal the
    /// punches they lost (by default settle checks every day whose Redis servers restarted or
    /// failed over since its layout against the journal, and refuses with exit 3 when it cannot
    /// be read)
    #[arg(long, conflicts_with = "check_journal")]
    pub no_reconcile: bool,
    /// Check every day against the journal, also a day that the same Redis servers held from
    /// before its first punch (by default such a day is not read back: nothing was lost to a
    /// restart or a fail-over)
    #[arg(long)]
    pub check_journal: bool,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// Where a job leaves its figures for Prometheus.
#[derive(Debug, Args, Clone)]
pub struct MetricsArgs {
    /// Write a node_exporter textfile (e.g.
    /// /var/lib/prometheus/node-exporter/attendance_settle.prom), replaced atomically at the end
    /// of each run; a file that cannot be written is a warning, not a failed run
    #[arg(long, value_name = "PATH")]
    pub metrics_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum PeriodCommand {
    /// Close a month (HR): nothing changes its days until it is reopened
    Close {
        /// The month, YYYY-MM
        #[arg(value_name = "YYYY-MM", value_parser = parse_month)]
        month: NaiveDate,
        #[command(flatten)]
        output: Output,
    },
    /// Reopen a closed month (HR), saying why (audited)
    Reopen {
        /// The month, YYYY-MM
        #[arg(value_name = "YYYY-MM", value_parser = parse_month)]
        month: NaiveDate,
        /// Why (kept in the audit)
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Debug, Subcommand)]
pub enum OvertimeCommand {
    /// Approve a day's overtime: payroll counts it
    Approve(OvertimeArgs),
    /// Reject a day's overtime: payroll counts 0 of it
    Reject(OvertimeArgs),
}

#[derive(Debug, Args)]
pub struct OvertimeArgs {
    /// The employee whose day it is
    #[arg(long, value_name = "ID", required_unless_present = "dept", conflicts_with = "dept")]
    pub employee: Option<String>,
    /// Every member of this department with a settled row on the day, but the one deciding
    /// (refused whole if the caller may not decide on one of them)
    #[arg(long, value_name = "ID")]
    pub dept: Option<String>,
    /// The day, YYYY-MM-DD
    #[arg(long, value_parser = parse_day)]
    pub date: NaiveDate,
    /// Why (kept in the audit)
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Every policy key's value in force on a date, and since when
    Show {
        /// The day (default: today)
        #[arg(long, value_parser = parse_day)]
        date: Option<NaiveDate>,
        #[command(flatten)]
        output: Output,
    },
    /// Set a key from a date on (a settled day from then on is re-settled; audited)
    ///
    /// The value is checked with the key's bounds (`policy show` lists the keys); the rules
    /// must hold together on every day from DATE on. Only the owner's database account may set.
    Set {
        /// The key, e.g. policy.grace_minutes
        key: String,
        /// The value, e.g. 10, 08:30, true, or mon,tue,wed for work_days
        value: String,
        /// The first day it applies to, YYYY-MM-DD
        #[arg(long, value_parser = parse_day)]
        from: NaiveDate,
        /// Why (kept in the history)
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        output: Output,
    },
    /// Every version ever set: who, when, why, the value before and after
    History {
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Debug, Subcommand)]
pub enum CalendarCommand {
    /// Make a day a work day or a holiday, whatever its weekday (a settled day is re-settled)
    Set {
        /// The day, YYYY-MM-DD
        #[arg(value_parser = parse_day)]
        date: NaiveDate,
        /// workday or holiday
        #[arg(value_parser = PossibleValuesParser::new(["workday", "holiday"]).map(|s| DayKind::parse(&s).expect("listed")))]
        kind: DayKind,
        /// Why (shown by `calendar list`)
        #[arg(long, default_value = "")]
        note: String,
        #[command(flatten)]
        output: Output,
    },
    /// Remove a day's entry: it counts by the policy's week again (a settled day is re-settled)
    Unset {
        /// The day, YYYY-MM-DD
        #[arg(value_parser = parse_day)]
        date: NaiveDate,
        #[command(flatten)]
        output: Output,
    },
    /// Set many days from a CSV file (header: date,kind,note). A file with any bad line is
    /// rejected whole, every bad line listed, and nothing is written.
    Import {
        /// The CSV file ('-' for stdin)
        file: PathBuf,
        /// Write every bad line of a refused file to FILE as CSV (line,reason), whole or not at
        /// all; the error line names the first ones
        #[arg(long, value_name = "FILE")]
        errors: Option<PathBuf>,
        /// Check the file and say which days it would add or change; write nothing
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Show each day of a range as it counts: calendar entry, else the policy's week
    List {
        /// First day [default: today]
        #[arg(long, value_parser = parse_day)]
        from: Option<NaiveDate>,
        /// Last day [default: 30 days after --from]
        #[arg(long, value_parser = parse_day)]
        to: Option<NaiveDate>,
        #[command(flatten)]
        output: Output,
    },
}

/// A shifts or assignments file, as `shifts import` and `shifts assign` read it.
#[derive(Debug, Args)]
pub struct ShiftsFile {
    /// The CSV file ('-' for stdin)
    pub file: PathBuf,
    /// Write every bad line of a refused file to FILE as CSV (line,reason)
    #[arg(long, value_name = "FILE")]
    pub errors: Option<PathBuf>,
    /// Check the file and say what it would add or change; write nothing
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make an Ed25519 key for a kiosk: the private key into FILE (a new file, mode 0600; the
    /// kiosk's signing.key_file), the public key printed for `keys add`. No store is touched.
    Generate {
        /// The key's id (1 to 64 letters, digits, '-', '_' or '.'), used once for ever
        id: String,
        /// Where to write the private key (never over an existing file)
        #[arg(long)]
        out: PathBuf,
        #[command(flatten)]
        output: Output,
    },
    /// Add a kiosk's public key to the registry (audited; the owner's account alone may)
    Add {
        id: String,
        /// A file holding the public key as `keys generate` printed it
        #[arg(long, value_name = "FILE")]
        public_key: PathBuf,
        /// The key may replay offline punches (back-dated past policy.replay_window_minutes)
        #[arg(long)]
        replay: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Revoke a key from an instant on: its events recorded at or after it are refused, the
    /// ones before stay valid; a kiosk with it records no more (audited)
    Revoke {
        id: String,
        /// RFC 3339 with an offset, e.g. 2026-12-07T14:00:00Z: the earliest moment the key may
        /// have leaked
        #[arg(long, value_parser = parse_instant)]
        at: chrono::DateTime<chrono::Utc>,
        /// Why (kept in the registry and its audit)
        #[arg(long)]
        reason: String,
        #[command(flatten)]
        output: Output,
    },
    /// Every key of the registry: public key, replay, who added it when, revocation
    List {
        #[command(flatten)]
        output: Output,
    },
}

/// An instant with its offset (RFC 3339).
fn parse_instant(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&chrono::Utc))
        .map_err(|e| format!("{e}: an RFC 3339 instant with its offset, e.g. 2026-12-07T14:00:00Z"))
}

#[derive(Subcommand, Debug)]
pub enum ShiftsCommand {
    /// Add or change shifts from a CSV file (header: name,start,end then any of
    /// late_grace,early_grace,work_days,break,part_time). A file with any bad line is refused
    /// whole, every bad line listed, and nothing is written.
    ///
    /// A shift's values have no dates: changing one that settled days were judged by would
    /// re-judge them, so it is refused (exit 1, nothing written) unless --resettle. To change
    /// hours from a date on, import them under a new name and `shifts assign` it from that date.
    Import {
        #[command(flatten)]
        file: ShiftsFile,
        /// Change shifts that settled days were judged by, and re-settle those days by the new
        /// values (every settled day each governs; audited in `corrections`, a corrected row
        /// kept), in the same transaction
        #[arg(long)]
        resettle: bool,
    },
    /// Assign shifts from a CSV file (header: scope,target,from,shift; scope department or
    /// employee; the latest assignment on or before a date applies, an employee's beats their
    /// department's, `default` is the company policy)
    ///
    /// A new or changed assignment from a settled day re-settles its target's settled rows up
    /// to the day before the target's next assignment, audited in `corrections` (a corrected row
    /// kept), in the same transaction; --dry-run says what it would re-settle.
    Assign(ShiftsFile),
    /// Every shift (the policy's `default` first) and every assignment
    List {
        #[command(flatten)]
        output: Output,
    },
    /// Which shift an employee follows on a date, and why
    Which {
        /// The employee's id
        employee_id: String,
        /// The work date [default: today]
        #[arg(long, value_parser = parse_day)]
        date: Option<NaiveDate>,
        #[command(flatten)]
        output: Output,
    },
}

#[derive(Debug, Subcommand)]
pub enum LeaveCommand {
    /// Record an approved leave, FROM and TO included; its settled days are re-settled
    Add {
        /// The employee's id
        employee_id: String,
        /// First day, YYYY-MM-DD
        #[arg(value_parser = parse_day)]
        from: NaiveDate,
        /// Last day, YYYY-MM-DD
        #[arg(value_parser = parse_day)]
        to: NaiveDate,
        /// annual, sick, parental, unpaid, training or other
        #[arg(long, default_value = "annual", value_parser = LEAVE_KINDS)]
        kind: String,
        /// Half of each day only: morning or afternoon (the halves meet at the middle of the
        /// employee's shift); the day is judged on the other half (status half_day_leave)
        #[arg(long, value_parser = ["morning", "afternoon"])]
        half: Option<String>,
        /// A note for HR
        #[arg(long, default_value = "")]
        note: String,
        #[command(flatten)]
        output: Output,
    },
    /// List leave, newest first
    List {
        /// Only this employee
        #[arg(long)]
        employee: Option<String>,
        /// Only leave that ends on or after this day
        #[arg(long, value_parser = parse_day)]
        from: Option<NaiveDate>,
        /// Only leave that starts on or before this day
        #[arg(long, value_parser = parse_day)]
        to: Option<NaiveDate>,
        #[command(flatten)]
        output: Output,
    },
    /// Cancel a leave (kept in the history as cancelled); its settled days are re-settled
    Cancel {
        /// The leave's id, as `leave add` and `leave list` show it
        id: u64,
        #[command(flatten)]
        output: Output,
    },
}

/// The kinds of leave HR records.
pub(crate) use crate::domain::report::payroll::LEAVE_KINDS;

#[derive(Debug, Subcommand)]
pub enum PunchCommand {
    /// Take a wrong punch off its day before settle, so that status, the roll call and settle
    /// see the day without it; run by the supervisor of the employee's department or HR (never
    /// on one's own punch), audited in MySQL and marked voided in the punch log
    Void(VoidArgs),
}

#[derive(Debug, Args)]
pub struct VoidArgs {
    /// The employee whose punch is voided
    pub employee_id: String,
    /// The punch's time, to the second as recorded: HH:MM[:SS] (today in the company's zone),
    /// YYYY-MM-DDTHH:MM[:SS] (the company's zone) or RFC 3339
    #[arg(long, value_name = "TIME", value_parser = parse_typed_time, required_unless_present = "event", conflicts_with = "event")]
    pub at: Option<TypedTime>,
    /// The punch's event id instead of its time (as `checkin --json` printed it)
    #[arg(long, value_name = "EVENT_ID")]
    pub event: Option<String>,
    /// in or out: needed only when the day has both at that time
    #[arg(long, value_parser = PossibleValuesParser::new(["in", "out"]).map(|s| s.parse::<Kind>().expect("listed")))]
    pub kind: Option<Kind>,
    /// Why (kept in the audit)
    #[arg(long, default_value = "")]
    pub reason: String,
    /// Optional check: the employee id you act as (as for `correct`)
    #[arg(long, value_name = "EMPLOYEE_ID")]
    pub by: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct CorrectArgs {
    /// The employee whose day is fixed
    pub employee_id: String,
    /// The settled day, YYYY-MM-DD
    #[arg(long, value_parser = parse_day)]
    pub date: NaiveDate,
    /// The check-in: HH:MM (local time on --date), YYYY-MM-DDTHH:MM[:SS] (local) or RFC 3339
    /// (needed for a time the clocks pass twice that night; a time they skip is refused)
    #[arg(long = "in", value_name = "TIME", value_parser = parse_typed_time)]
    pub check_in: Option<TypedTime>,
    /// The check-out: as --in
    #[arg(long = "out", value_name = "TIME", value_parser = parse_typed_time)]
    pub check_out: Option<TypedTime>,
    /// Clear the check-in (a punch that was not the employee's); the audit keeps the old time
    #[arg(long, conflicts_with = "check_in")]
    pub clear_in: bool,
    /// Clear the check-out; the audit keeps the old time
    #[arg(long, conflicts_with = "check_out")]
    pub clear_out: bool,
    /// Set the day's status: absent or leave (on leave). The day's times are cleared (the audit
    /// keeps them), and a later settle keeps the status
    #[arg(long, value_name = "STATUS", conflicts_with_all = ["check_in", "check_out", "clear_in", "clear_out"],
          value_parser = PossibleValuesParser::new(["absent", "leave"]).map(|s| if s == "absent" { DayStatus::Absent } else { DayStatus::OnLeave }))]
    pub status: Option<DayStatus>,
    /// With --status leave: the kind of leave, booked as an approved leave of that one day
    /// (payroll counts it under its kind); without it the day counts as leave of kind other
    #[arg(long, value_name = "KIND", requires = "status", value_parser = LEAVE_KINDS)]
    pub leave_kind: Option<String>,
    /// Why (kept in the audit)
    #[arg(long)]
    pub reason: String,
    /// Optional check: the employee id you act as. Who acts is the employee the roster maps to
    /// the operating-system account running the command; --by must name that employee
    #[arg(long, value_name = "EMPLOYEE_ID")]
    pub by: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

/// `--json`: print JSON instead of text. A command that prints a result prints one JSON
/// document; one that prints a stream (`watch-dept`, `relay --follow`) one object per line.
#[derive(Debug, Args, Clone, Copy, Default)]
pub struct Output {
    /// Print JSON: one document, or one object per line for a stream
    #[arg(long)]
    pub json: bool,
}

/// How a report is printed: `--format`, or `--json` for `--format json`; and where.
#[derive(Debug, Args, Clone)]
pub struct ReportFormat {
    /// table (or text), csv, json, or xlsx (a workbook: needs -o FILE unless stdout is redirected)
    #[arg(long, default_value = "table", value_parser = format_parser())]
    format: Format,
    /// The same as --format json
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// The same as --format csv
    #[arg(long, conflicts_with_all = ["format", "json"])]
    csv: bool,
    /// Write the report to this file instead of stdout
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// CSV cells as stored, without the leading ' that keeps a cell beginning with =, +, -, @,
    /// a tab or a CR from being run as a formula: RISK: a spreadsheet opening the file may run
    /// a name such as =HYPERLINK(..) or =cmd|..!A0 (OWASP CSV injection). Only for a program that reads the CSV.
    #[arg(long)]
    pub csv_raw: bool,
    /// The table with every column (by default a table keeps to 80 columns: the essential ones)
    #[arg(long)]
    pub wide: bool,
}

impl ReportFormat {
    pub fn get(&self) -> Format {
        if self.json {
            Format::Json
        } else if self.csv {
            Format::Csv
        } else {
            self.format
        }
    }
}

/// `--format`'s values, typed: anything else is a usage error (exit 2), never a silent table.
fn format_parser() -> impl TypedValueParser<Value = Format> {
    // `text` is another name for `table` (what a person reads).
    let values = Format::NAMES.map(|n| {
        let v = clap::builder::PossibleValue::new(n);
        if n == "table" {
            v.alias("text")
        } else {
            v
        }
    });
    PossibleValuesParser::new(values).map(|s| s.parse::<Format>().expect("one of NAMES"))
}

/// A date range; both ends included.
#[derive(Debug, Args, Clone)]
pub struct DateRange {
    /// First day [default: the first of this month]
    #[arg(long, value_parser = parse_day)]
    pub from: Option<NaiveDate>,
    /// Last day [default: today]
    #[arg(long, value_parser = parse_day)]
    pub to: Option<NaiveDate>,
}

#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Per department: headcount and rows by status for a day
    Day {
        /// The day [default: yesterday]
        #[arg(long, value_parser = parse_day)]
        date: Option<NaiveDate>,
        /// Only this department
        #[arg(long)]
        dept: Option<String>,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Who was absent on a day
    Absent {
        /// The day [default: yesterday]
        #[arg(long, value_parser = parse_day)]
        date: Option<NaiveDate>,
        /// Only this department
        #[arg(long)]
        dept: Option<String>,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// One employee's days over a range (a month sheet), with totals
    Employee {
        /// The employee's id
        employee_id: String,
        #[command(flatten)]
        range: DateRange,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// A department over a range: each employee's days by status and minutes, with totals
    Dept {
        /// The department's id
        department_id: String,
        #[command(flatten)]
        range: DateRange,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// The month sheet: one row per employee, a status code per day (legend below the table),
    /// totals per row (days present, late, absent, on leave, hours worked, overtime) and per day
    Month {
        /// The month, YYYY-MM
        #[arg(long, value_name = "YYYY-MM", value_parser = parse_month)]
        month: NaiveDate,
        /// Only this department
        #[arg(long)]
        dept: Option<String>,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// One employee's month as a timesheet: a row per day (shift, punches and how they came,
    /// break, worked, late, early and overtime minutes, status, leave), and the month's totals
    Timesheet {
        /// The employee's id
        #[arg(long, value_name = "E")]
        employee: String,
        /// The month, YYYY-MM
        #[arg(long, value_name = "YYYY-MM", value_parser = parse_month)]
        month: NaiveDate,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Payroll's period: one line per employee (days worked, absent, on leave by kind, late
    /// count and minutes, minutes worked and overtime), for a payroll import (csv or xlsx)
    Payroll {
        #[command(flatten)]
        range: DateRange,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Corrections of settled days, oldest first: who made each (as --by claimed, the
    /// operating-system account, the MySQL account), when, why, and what changed
    Corrections {
        /// Only this employee's days
        #[arg(long)]
        employee: Option<String>,
        #[command(flatten)]
        range: DateRange,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Every punch of settled days, in time order: when (company zone), kind, where it came
    /// from (source, key id), when it was recorded, its event id, and how it came (live, bulk,
    /// recovered, corrected)
    Punches {
        /// Only this employee's punches
        #[arg(long)]
        employee: Option<String>,
        /// Only this department's punches
        #[arg(long)]
        dept: Option<String>,
        #[command(flatten)]
        range: DateRange,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Roll call: who is in right now (their latest punch today is a check-in), per
    /// department, from the day's boards in Redis; with --counts each department's numbers
    Now {
        /// Only this department
        #[arg(long, value_name = "D")]
        dept: Option<String>,
        /// One row per department instead: in, from the day before, out, not yet in, on the board
        #[arg(long)]
        counts: bool,
        /// The roll call as it stood at this time (the punches on the boards up to it): HH:MM
        /// (today in the company's zone), YYYY-MM-DDTHH:MM[:SS] (the company's zone) or RFC 3339;
        /// at most policy.max_backdate_days back [default: now, by the Redis server's clock]
        #[arg(long, value_name = "TIME", value_parser = parse_typed_time)]
        at: Option<TypedTime>,
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Settle runs, newest first, or with --failures the rows they could not write
    Runs {
        /// Only runs of this day
        #[arg(long, value_parser = parse_day)]
        date: Option<NaiveDate>,
        /// How many runs
        #[arg(long, default_value_t = 20)]
        limit: u32,
        /// List the failed rows of those runs instead
        #[arg(long)]
        failures: bool,
        #[command(flatten)]
        format: ReportFormat,
    },
}

/// `simulate --phase`, as the command line spells it (the domain knows nothing of clap).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SamplePhase {
    Morning,
    Evening,
}

impl From<SamplePhase> for crate::domain::formats::sample_day::Phase {
    fn from(p: SamplePhase) -> Self {
        match p {
            SamplePhase::Morning => Self::Morning,
            SamplePhase::Evening => Self::Evening,
        }
    }
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The day, YYYY-MM-DD [default: today in the company's zone]
    #[arg(long, value_parser = parse_day)]
    pub date: Option<NaiveDate>,
    /// Morning check-ins or evening check-outs (the same people are absent in both)
    #[arg(long, value_enum)]
    pub phase: SamplePhase,
    /// Percent of the roster that never comes
    #[arg(long, default_value_t = 3.0)]
    pub absent_pct: f64,
    /// Percent that arrive after the deadline
    #[arg(long, default_value_t = 8.0)]
    pub late_pct: f64,
    /// Percent that leave before the end of the day
    #[arg(long, default_value_t = 5.0)]
    pub early_pct: f64,
    /// Seed of the random generator
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Output file [default: stdout]
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct DayMetricsArgs {
    /// Department queues given a series of their own, the deepest first (the rest: department="_other")
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=500))]
    pub top: u16,
    /// Write to this file, whole (node_exporter reads *.prom) [default: stdout]
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Upsert employees and departments from a CSV file
    /// (header: employee_id,name,department_id,department_name,role, then any of
    /// login,start_date,end_date). A file with any bad row is rejected whole, every bad line
    /// listed, and nothing is written. Says what it did: new, changed (which fields), moved,
    /// reactivated, deactivated, unchanged.
    Import {
        /// The CSV file ('-' for stdin)
        file: PathBuf,
        /// Write every bad line of a refused roster to FILE as CSV (line,reason), whole or not
        /// at all; the error line names the first ones
        #[arg(long, value_name = "FILE")]
        errors: Option<PathBuf>,
        /// The file is the whole roster: everyone still employed that it leaves out leaves,
        /// with an end date (today, or --end-date)
        #[arg(long)]
        full: bool,
        /// With --full: the last day of those the file leaves out, YYYY-MM-DD [default: today]
        #[arg(long, value_parser = parse_day, requires = "full")]
        end_date: Option<NaiveDate>,
        /// Show what the import would do, and change nothing in any store
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        output: Output,
    },
    /// List the employees: by default those employed today or not yet started; with
    /// --inactive those who left (past their end date, or taken off the roster)
    List {
        /// Only this department's
        #[arg(long, value_name = "D")]
        dept: Option<String>,
        /// Those who left instead
        #[arg(long)]
        inactive: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Write the roster as a CSV that `org import` reads back unchanged: every employee on it,
    /// leavers with their end date, every column (login, start_date, end_date)
    Export {
        /// Output file, written whole or not at all [default: stdout]
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Write a realistic roster CSV: departments of uneven sizes, one supervisor each
    Generate {
        /// Number of employees (1 to 10,000,000: a roster is held in memory while it is drawn)
        #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
        employees: u32,
        /// Number of departments (1 to 100,000, and no more than employees)
        #[arg(long, default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        departments: u32,
        /// Seed of the random generator, for a reproducible roster
        #[arg(long, default_value_t = 42)]
        seed: u64,
        /// Output file [default: stdout]
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub struct RecoverArgs {
    /// The day to rebuild, YYYY-MM-DD
    #[arg(long, value_parser = parse_day)]
    pub date: NaiveDate,
    /// The read ends when no journal message arrives for this long (milliseconds)
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u64).range(100..=60_000))]
    pub idle_ms: u64,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct InitDayArgs {
    /// The day, YYYY-MM-DD [default: today in the company's zone]
    #[arg(long, value_parser = parse_day)]
    pub date: Option<NaiveDate>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct CheckinArgs {
    /// The employee's id
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub employee_id: Option<String>,
    /// Bulk: a CSV of punches with the header employee_id,kind,at[,source] ('-' for stdin).
    /// kind may be empty (its time decides, as without --kind). Bad rows are refused and
    /// listed; good rows still land; exit 4 if any row was refused.
    /// A pipe, a FIFO or stdin is a stream: punches are applied as they arrive (batches
    /// flushed within 200 ms or at 100 rows), the summary comes at its end or on SIGTERM.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["kind", "at"])]
    pub file: Option<PathBuf>,
    /// With --file: write every refused row to FILE as CSV (line,reason), whole or not at all;
    /// stderr and --json list the first 20 and count the rest.
    #[arg(long, value_name = "FILE", requires = "file")]
    pub errors: Option<PathBuf>,
    /// in or out. Without it, the punch's time alone decides: before policy.auto_kind_split
    /// (default: midway between checkin_deadline and checkout_from, 13:30) a check-in, at or
    /// after it a check-out, whatever order the day's punches arrive in.
    #[arg(long, value_parser = PossibleValuesParser::new(["in", "out"]).map(|s| s.parse::<Kind>().expect("listed")))]
    pub kind: Option<Kind>,
    /// When the punch happened: HH:MM (today in the company's zone, by the Redis server's
    /// clock), YYYY-MM-DDTHH:MM[:SS] (the company's zone) or RFC 3339 with an offset (needed for
    /// a time the clocks pass twice that night; a time they skip is refused) [default: now]
    #[arg(long, value_name = "TIME", value_parser = parse_typed_time)]
    pub at: Option<TypedTime>,
    /// Where the punch comes from (kiosk name)
    #[arg(long, default_value = "cli")]
    pub source: String,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The employee's id
    pub employee_id: String,
    /// The day, YYYY-MM-DD [default: today in the company's zone]
    #[arg(long, value_parser = parse_day)]
    pub date: Option<NaiveDate>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct RelayArgs {
    /// Keep draining until Ctrl-C, instead of draining once and exiting
    #[arg(long)]
    pub follow: bool,
    /// With --follow: pause between two drains, in milliseconds
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub interval_ms: u64,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

#[derive(Debug, Args)]
pub struct WatchDeptArgs {
    /// The department's id
    pub department_id: String,
    /// Take the events waiting in the queue, print them and exit
    #[arg(long)]
    pub once: bool,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// The punches held for review, oldest first (pending ones unless --all)
    List {
        /// Only punches of this work day, YYYY-MM-DD
        #[arg(long, value_parser = parse_day)]
        date: Option<NaiveDate>,
        /// Only punches of this department
        #[arg(long, value_name = "DEPT_ID")]
        dept: Option<String>,
        /// Only punches recorded by the process signing with this key id
        #[arg(long, value_name = "KEY_ID")]
        key: Option<String>,
        /// Decided ones too, with who decided, when and why
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        output: Output,
    },
    /// Apply held punches exactly as a replaying kiosk's check-ins (board, signed event, punch
    /// log as approved): one by its id, or every pending one a filter matches; by the
    /// employee's supervisor or HR, never the employee
    ///
    /// With filters (`--dept`, `--date`, `--key`, combined with AND, or `--all-pending`), each
    /// matching punch is checked and decided on its own, audited on its own row; the ones the
    /// account running it may not decide are refused and left pending (listed, exit 4).
    /// `--dry-run` counts what would be decided and refused, and changes nothing.
    Approve(ReviewDecision),
    /// Refuse held punches for good (one by its id, or by filter as `approve`): nothing changes
    /// but their audit
    Reject(ReviewDecision),
}

/// A decision on one held punch, or on every pending one a filter matches.
#[derive(Debug, Args)]
pub struct ReviewDecision {
    /// The review id (`review list`, or what `checkin` printed); or give filters instead
    #[arg(required_unless_present_any = ["dept", "date", "key", "all_pending"])]
    pub id: Option<u64>,
    /// Every pending punch of this department (the department it was recorded under)
    #[arg(long, value_name = "DEPT_ID", conflicts_with = "id")]
    pub dept: Option<String>,
    /// Every pending punch of this work day, YYYY-MM-DD
    #[arg(long, value_parser = parse_day, conflicts_with = "id")]
    pub date: Option<NaiveDate>,
    /// Every pending punch recorded by the process signing with this key id (`review list`
    /// shows each punch's key)
    #[arg(long, value_name = "KEY_ID", conflicts_with = "id")]
    pub key: Option<String>,
    /// Every pending punch (alone: no filter narrows it)
    #[arg(long, conflicts_with_all = ["id", "dept", "date", "key"])]
    pub all_pending: bool,
    /// Count what would be decided and refused; change nothing
    #[arg(long, conflicts_with = "id")]
    pub dry_run: bool,
    /// Why (kept in the audit of each punch decided; required to reject)
    #[arg(long)]
    pub reason: Option<String>,
    #[command(flatten)]
    pub output: Output,
}

#[derive(Debug, Subcommand)]
pub enum DlqCommand {
    /// Show the parked messages: event id, department, failures, why
    List {
        /// Show at most this many
        #[arg(long, default_value_t = 100)]
        limit: usize,
        #[command(flatten)]
        output: Output,
    },
    /// Put parked messages back on their department's queue, with a fresh failure count
    Replay(DlqSelect),
    /// Delete parked messages for good
    Purge {
        #[command(flatten)]
        select: DlqSelect,
        /// Yes, delete them for good (without it nothing is purged)
        #[arg(long)]
        yes: bool,
    },
}

/// Which parked messages: some event ids, or --all.
#[derive(Debug, Args)]
pub struct DlqSelect {
    /// Event ids (the messages' message_id)
    #[arg(required_unless_present = "all")]
    pub event_ids: Vec<String>,
    /// Every parked message
    #[arg(long, conflicts_with = "event_ids")]
    pub all: bool,
    #[command(flatten)]
    pub output: Output,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn args(line: &str) -> Vec<std::ffi::OsString> {
        std::iter::once("attendance")
            .chain(line.split(' '))
            .map(Into::into)
            .collect()
    }

    /// What the whole definition makes of `line`, beside what the one-command path makes of it.
    fn both(line: &str) -> (String, Option<String>) {
        let whole = Cli::command()
            .try_get_matches_from(args(line))
            .map_err(|e| e.kind())
            .and_then(|m| matched(m).map_err(|e| e.kind()));
        (
            format!("{whole:?}"),
            one_command(&args(line)).map(|c| format!("{:?}", Ok::<_, ()>(c))),
        )
    }

    #[test]
    fn a_checkin_or_status_parsed_alone_is_what_the_whole_definition_parses() {
        for line in [
            "checkin E000001",
            "checkin E000001 --kind in --at 08:55 --source kiosk-3 -q",
            "checkin E000001 --at 2026-11-20T21:55:00+01:00 --json",
            "checkin --file punches.csv --errors refused.csv",
            "checkin E000001 --namespace acme --redis-url redis://10.0.0.1:6379/ --timezone Europe/Berlin",
            "status E000001 --date 2026-11-20 --json",
            "status E000001 -v",
        ] {
            let (whole, alone) = both(line);
            assert!(whole.starts_with("Ok("), "{line}: {whole}");
            assert_eq!(alone.as_deref(), Some(whole.as_str()), "{line}");
        }
    }

    #[test]
    fn anything_else_goes_to_the_whole_definition() {
        for line in [
            "checkin --help",
            "checkin",
            "checkin E000001 --kind sideways",
            "checkin E000001 --file x.csv",
            "checkin E000001 --bogus",
            "status",
            "--version",
            "relay --follow",
            "report day",
        ] {
            assert!(one_command(&args(line)).is_none(), "{line}");
        }
        // The whole definition still answers them: help, the version, and its own errors.
        assert_eq!(
            parse_from(args("checkin --help")).unwrap_err().kind(),
            clap::error::ErrorKind::DisplayHelp
        );
        assert_eq!(
            parse_from(args("checkin E000001 --kind sideways")).unwrap_err().kind(),
            clap::error::ErrorKind::InvalidValue
        );
        assert!(matches!(
            parse_from(args("relay --follow")).unwrap().command,
            Command::Relay(_)
        ));
    }
}

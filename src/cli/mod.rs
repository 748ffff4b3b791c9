//! The command line: clap's types (`args.rs`, re-exported here), the dispatch, and one file
//! per subcommand. A command turns its arguments into plain values, calls one operation,
//! and renders what it returns (data to stdout through `output`, status to stderr); it opens
//! no connection and touches no store.
//!
//! May import: `cli`, `ops`, `domain`, `config`, `error`, `output`, `interrupt`; never a store
//! folder (`redis`, `mysql`, `amqp`) nor a store's crate. Nothing imports `cli` but `main`.
//! `tests/it/architecture` checks this.

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::text::inert;
use crate::output::Out;

/// `outln!` for a line a person reads: made inert first (`domain::text::inert`), so a name
/// or a reason holding ESC, CR or U+202E shows as `\u{1b}` and never acts on the terminal.
/// JSON is printed with `outln!`, as serde escapes it.
macro_rules! textln {
    ($($arg:tt)*) => {
        $crate::output::line($crate::domain::text::inert(&format!($($arg)*)))
    };
}

mod args;
mod checkin;
mod completions;
mod config;
mod correct;
mod dlq;
mod doctor;
mod init_day;
mod keys;
mod man;
mod metrics;
mod people;
mod queues;
mod record;
mod recover;
mod relay;
mod report;
mod settle;
mod simulate;
mod watch;

pub use args::*;

/// What every command gets: the validated config and the output settings.
pub(crate) struct Ctx {
    pub cfg: Config,
    pub out: Out,
}

impl Ctx {
    /// Today in the company's zone.
    pub(crate) fn today(&self) -> NaiveDate {
        chrono::Utc::now().with_timezone(&self.cfg.timezone).date_naive()
    }

    /// A status line on stderr (unless `-q`), made inert like every text a person reads.
    pub(crate) fn say(&self, msg: impl AsRef<str>) {
        self.out.status(inert(msg.as_ref()));
    }

    /// A warning on stderr, even under `-q`, made inert like every text a person reads.
    pub(crate) fn warn(&self, msg: impl AsRef<str>) {
        self.out.warning(inert(msg.as_ref()));
    }

    /// A `--date` flag (typed and range-checked by clap), or today.
    pub(crate) fn date_or_today(&self, date: Option<NaiveDate>) -> NaiveDate {
        date.unwrap_or_else(|| self.today())
    }
}

/// An input file, or standard input for `-`, buffered (every file is streamed by its reader).
pub(crate) fn input(file: &std::path::Path) -> Result<Box<dyn std::io::Read + Send>, crate::error::Error> {
    if file.as_os_str() == "-" {
        return Ok(Box::new(std::io::BufReader::new(std::io::stdin())));
    }
    std::fs::File::open(file)
        .map(|f| Box::new(std::io::BufReader::new(f)) as Box<dyn std::io::Read + Send>)
        .map_err(|e| crate::error::Error::input(format!("cannot open {}: {e}", file.display())))
}

/// A refused input file's bad rows: every one to `--errors FILE` (written whole or not at all),
/// then the one-line rejection, which says where they all are.
pub(crate) fn refused_file(
    errors: Option<&std::path::Path>,
    bad: &[crate::domain::csv_input::Refusal],
    rejection: crate::error::Error,
) -> anyhow::Error {
    let Some(file) = errors else {
        return rejection.into();
    };
    match crate::files::write_with(file, |w| crate::domain::csv_input::write_refusals(w, bad)) {
        Ok(()) => anyhow::Error::from(rejection).context(format!("every bad line is in {}", file.display())),
        Err(e) => e.context(format!("writing the {} bad line(s) to {}", bad.len(), file.display())),
    }
}

/// A destructive command goes on only with `--yes`; without it, one line saying what it would
/// destroy (exit 2), before any store is touched.
pub(crate) fn confirmed(yes: bool, what: impl FnOnce() -> String) -> Result<(), crate::error::Error> {
    match yes {
        true => Ok(()),
        false => Err(crate::error::Error::input(format!("{}: add --yes", what()))),
    }
}

/// A table for people: every cell made inert, then `output::print_table`.
pub(crate) fn table(header: &[&str], rows: Vec<Vec<String>>) -> std::io::Result<()> {
    let rows = rows
        .into_iter()
        .map(|r| r.into_iter().map(|c| inert(&c).into_owned()).collect())
        .collect();
    crate::output::print_table(header, rows)
}

pub fn run(cli: Cli) -> Result<()> {
    // Completions and man pages come from the clap definitions alone: no config is read, so a
    // broken config file cannot stop an install script.
    match &cli.command {
        Command::Completions(a) => return completions::completions(a),
        Command::Man(a) => return man::man(a),
        _ => {}
    }
    let started = std::time::Instant::now();
    let overrides = cli.global.overrides();
    let cfg = Config::load(&overrides)?;
    // Every instant a command prints is in the company's zone (docs/commands.md).
    crate::domain::instant::set_zone(cfg.timezone);
    let ctx = Ctx {
        cfg,
        out: Out {
            quiet: cli.global.quiet,
            verbose: cli.global.verbose,
        },
    };
    for w in crate::config::unknown_variables(std::env::vars_os().map(|(k, _)| k)) {
        ctx.say(w);
    }
    // The company's rules are the rulebook's: a host's file or environment may not set them
    // (`migrate` imports them once, as the rulebook's first version).
    if !matches!(cli.command, Command::Migrate) {
        if let Some((key, source)) = ctx.cfg.sources.policy_given().into_iter().next() {
            return Err(crate::config::rulebook::refusal(key, &source).into());
        }
    }
    // `-v` means the same on every command: what it runs against (as `config show` prints
    // it, secrets hidden), and how long it took.
    config::verbose(&ctx, &overrides);
    let result = match cli.command {
        Command::Config(c) => config::run(&ctx, c, &overrides),
        command => dispatch(&ctx, command),
    };
    let outcome = if result.is_ok() { "done" } else { "failed" };
    ctx.out
        .verbose(format!("{outcome} in {:.3}s", started.elapsed().as_secs_f64()));
    result
}

fn dispatch(ctx: &Ctx, command: Command) -> Result<()> {
    match command {
        Command::Migrate => record::migrate::run(ctx),
        Command::Org(c) => people::org::run(ctx, c),
        Command::InitDay(a) => init_day::run(ctx, a),
        Command::Checkin(a) => checkin::single::run(ctx, a),
        Command::Status(a) => checkin::status::run(ctx, a),
        Command::Relay(a) => relay::run(ctx, a),
        Command::WatchDept(a) => watch::dept::run(ctx, a),
        Command::Dlq(c) => dlq::run(ctx, c),
        Command::Recover(a) => recover::run(ctx, a),
        Command::Settle(a) => settle::run(ctx, a),
        Command::Metrics(a) => metrics::run(ctx, a),
        Command::Calendar(c) => people::calendar::run(ctx, c),
        Command::Policy(c) => people::policy::run(ctx, c),
        Command::Leave(c) => people::leave::run(ctx, c),
        Command::Shifts(c) => people::shifts::run(ctx, c),
        Command::Keys(c) => keys::run(ctx, c),
        Command::Period(c) => people::period::run(ctx, c),
        Command::Correct(a) => correct::run(ctx, a),
        Command::Overtime(c) => people::overtime::run(ctx, c),
        Command::Punch(c) => checkin::punch::run(ctx, c),
        Command::Review(c) => checkin::review::run(ctx, c),
        Command::Report(c) => report::run(ctx, c),
        Command::Simulate(a) => simulate::run(ctx, a),
        Command::Archive(a) => record::archive::run(ctx, a),
        Command::Db(c) => record::db::run(ctx, c),
        Command::Doctor(a) => doctor::run(ctx, a),
        Command::Queues(c) => queues::run(ctx, c),
        Command::Completions(_) | Command::Man(_) | Command::Config(_) => {
            unreachable!("handled before the dispatch")
        }
    }
}

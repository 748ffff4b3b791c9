//! One file per subcommand: turn arguments into plain options, call the domain layer, print.

use anyhow::Result;
use chrono::NaiveDate;

use crate::cli::{Cli, Command};
use crate::config::Config;
use crate::error::Error;
use crate::output::Out;
use crate::services::RedisConn;

mod calendar;
mod checkin;
mod checkin_bulk;
mod correct;
mod dlq;
mod init_day;
mod leave;
mod migrate;
mod org;
mod relay;
mod report;
mod settle;
mod simulate;
mod status;
mod watch_dept;
mod watch_screen;

/// What every command gets: the validated config and the output settings.
pub struct Ctx {
    pub cfg: Config,
    pub out: Out,
}

impl Ctx {
    /// Today in the company's zone.
    pub fn today(&self) -> NaiveDate {
        chrono::Utc::now().with_timezone(&self.cfg.timezone).date_naive()
    }

    /// A `--date` flag, or today.
    pub fn date_or_today(&self, date: Option<&str>) -> Result<NaiveDate> {
        match date {
            Some(d) => Ok(parse_date(d)?),
            None => Ok(self.today()),
        }
    }
}

/// A YYYY-MM-DD date, or a usage error that says what was expected.
pub fn parse_date(s: &str) -> Result<NaiveDate, Error> {
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| Error::input(format!("invalid date '{s}': expected YYYY-MM-DD")))
}

pub fn run(cli: Cli) -> Result<()> {
    let cfg = Config::load(&cli.global.overrides())?;
    let ctx = Ctx {
        cfg,
        out: Out {
            quiet: cli.global.quiet,
            verbose: cli.global.verbose,
        },
    };
    match cli.command {
        Command::Migrate => migrate::run(&ctx),
        Command::Org(c) => org::run(&ctx, c),
        Command::InitDay(a) => init_day::run(&ctx, a),
        Command::Checkin(a) => checkin::run(&ctx, a),
        Command::Status(a) => status::run(&ctx, a),
        Command::Relay(a) => relay::run(&ctx, a),
        Command::WatchDept(a) => watch_dept::run(&ctx, a),
        Command::Dlq(c) => dlq::run(&ctx, c),
        Command::Settle(a) => settle::run(&ctx, a),
        Command::Calendar(c) => calendar::run(&ctx, c),
        Command::Leave(c) => leave::run(&ctx, c),
        Command::Correct(a) => correct::run(&ctx, a),
        Command::Report(c) => report::run(&ctx, c),
        Command::Simulate(a) => simulate::run(&ctx, a),
    }
}

/// Find an employee: the Redis roster cache first, then MySQL (and cache what it finds).
/// Unknown everywhere: refused (exit 1). MySQL is opened only on a cache miss.
pub fn resolve_employee(
    ctx: &Ctx,
    con: &mut RedisConn,
    keys: &crate::keys::Keys,
    id: &str,
) -> Result<crate::board::Employee> {
    crate::bulk::resolve(&ctx.cfg, con, keys, &[id])?
        .remove(id)
        .ok_or_else(|| Error::refused(format!("unknown employee '{id}'")).into())
}

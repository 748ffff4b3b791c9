//! Who is who, shared by every family of operations: an employee and their department (the
//! Redis roster cache first, MySQL for its misses, cached back), the shifts they work (Redis's
//! copy of the shift table, MySQL while it cannot be read), the policy of a day (the rulebook,
//! from the same copy) and who is acting (the employee the
//! roster maps to this process's operating-system account).

use std::collections::HashMap;

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::{Config, Policy};
use crate::domain::day::clock::Reading;
use crate::domain::day::rulebook::Rulebook;
use crate::domain::day::shifts::{ShiftTable, Shifts};
use crate::domain::people::authority::{self, Actor};
use crate::domain::people::employment::Employment;
use crate::error::Error;
use crate::mysql::{corrections, Conn, Db};
use crate::redis::board::{Board, Employee};

/// Look employees up: the Redis roster cache first, then MySQL for the misses (opened only
/// then), which are cached back. Returns the ones found.
pub fn resolve(cfg: &Config, board: &mut Board, ids: &[&str]) -> Result<HashMap<String, Employee>> {
    let found = board.lookup_many(ids)?;
    complete(cfg, board, ids, found)
}

/// [`resolve`], and the Redis server's clock read in the same round trip as the roster cache.
/// With `max_skew` (punches with an explicit time), a host whose clock is further than that
/// from the server's is refused (exit 1) before anything is written, the roster cache included.
pub(crate) fn resolve_timed(
    cfg: &Config,
    board: &mut Board,
    ids: &[&str],
    max_skew: Option<u32>,
) -> Result<(HashMap<String, Employee>, Reading)> {
    let (found, clock) = board.lookup_many_timed(ids)?;
    if let Some(max) = max_skew {
        clock
            .check(max, "a punch with an explicit time")
            .map_err(Error::refused)?;
    }
    Ok((complete(cfg, board, ids, found)?, clock))
}

/// The roster cache's answers, with its misses looked up in MySQL and cached back. Caching
/// back is a courtesy: a part of the cache that cannot be written (its master lost on a
/// cluster) costs the next check-in a MySQL lookup again, never this one its punch.
fn complete(
    cfg: &Config,
    board: &mut Board,
    ids: &[&str],
    cached: Vec<Option<Employee>>,
) -> Result<HashMap<String, Employee>> {
    let mut found = HashMap::with_capacity(ids.len());
    let mut missing = Vec::new();
    for (id, e) in ids.iter().zip(cached) {
        match e {
            Some(e) => {
                found.insert(id.to_string(), e);
            }
            None => missing.push(*id),
        }
    }
    if !missing.is_empty() {
        let from_db = crate::mysql::people::roster_rows::active_by_ids(&crate::mysql::Db::open(cfg)?, &missing)?;
        // Best effort: an account that may only read the roster cache (a kiosk's: it must not
        // be able to move anyone, docs/security.md), or a cluster whose part's master is lost,
        // costs the next check-in a MySQL lookup again, never this one.
        let _ = board.cache_roster(&from_db);
        for m in from_db {
            let e = Employee {
                id: m.employee_id,
                department_id: m.department_id,
                name: m.name,
                employment: m.employment,
            };
            found.insert(e.id.clone(), e);
        }
    }
    Ok(found)
}

/// The shifts of `employees` (and every department's) from Redis's copy of the shift table:
/// one small read, in which a company with no shift finds nothing (everyone on the policy).
/// The copy is one key, so on a cluster it lives on one master: while that master fails over,
/// the shifts come from MySQL, as the roster does when its part of the cache cannot be read (no
/// key of the whole company may take the check-ins of healthy departments down).
/// `policy` is that of the day judged: its default shift is the shift `default`.
pub(crate) fn shifts<S: AsRef<str>>(
    cfg: &Config,
    board: &mut Board,
    employees: &[S],
    policy: &Policy,
) -> Result<Shifts> {
    let table = match board.read_shifts(employees) {
        Ok(table) => table,
        Err(redis) => crate::mysql::Db::open(cfg)
            .and_then(|db| crate::mysql::people::shift_rows::read(&db))
            .map_err(|mysql| redis.context(format!("nor could MySQL's shift tables be read: {mysql:#}")))?,
    };
    Ok(Shifts::new(table, policy))
}

/// One employee, or refused (exit 1) when unknown everywhere.
pub(crate) fn employee(cfg: &Config, board: &mut Board, id: &str) -> Result<Employee> {
    known(resolve(cfg, board, &[id])?, id)
}

pub(crate) fn known(mut found: HashMap<String, Employee>, id: &str) -> Result<Employee> {
    found
        .remove(id)
        .ok_or_else(|| Error::refused(format!("unknown employee '{id}'")).into())
}

/// Refuse a punch on a day outside the employee's employment dates (a leaver after their last
/// day, a joiner before their first): nobody is expected then, so nothing may be recorded.
pub(crate) fn check_employed(employee: &Employee, day: NaiveDate) -> Result<(), Error> {
    match employee.employment.refusal(&employee.id, day) {
        Some(why) => Err(Error::refused(why)),
        None => Ok(()),
    }
}

/// Rewrite Redis's copy of the shift table and the rulebook from MySQL: after every change of
/// either, and by init-day.
pub(crate) fn refresh_copy(db: &Db, board: &mut Board) -> Result<ShiftTable> {
    let table = crate::mysql::people::shift_rows::read(db)?;
    let rules = crate::mysql::people::policy_rows::read(db)?;
    board.write_shifts(&table, &rules)?;
    Ok(table)
}

/// The company's rulebook, from Redis's copy (for a single check-in, read with its roster
/// lookup: no round trip of its own), else from MySQL, copied back for the next command (best
/// effort, as the roster cache is: an account that may only read the copy still judges right).
pub(crate) fn rules(cfg: &Config, board: &mut Board) -> Result<Rules> {
    let book = match board.read_rules() {
        Ok(Some(book)) => book,
        copy => {
            let book = crate::mysql::people::policy_rows::read(&Db::open(cfg)?).map_err(|mysql| match copy {
                Err(redis) => redis.context(format!("nor could MySQL's rulebook be read: {mysql:#}")),
                Ok(_) => mysql,
            })?;
            let _ = board.write_rules(&book);
            book
        }
    };
    Ok(Rules::new(cfg, book))
}

/// [`shifts`] with the default shift of `date`'s policy (the rulebook's, see [`rules`]).
pub(crate) fn shifts_on<S: AsRef<str>>(
    cfg: &Config,
    board: &mut Board,
    employees: &[S],
    date: NaiveDate,
) -> Result<Shifts> {
    let policy = policy_on(cfg, board, date)?;
    shifts(cfg, board, employees, &policy)
}

/// The policy in force on `date`, from the rulebook's copy (see [`rules`]).
pub(crate) fn policy_on(cfg: &Config, board: &mut Board, date: NaiveDate) -> Result<Policy> {
    rules(cfg, board)?.on(date)
}

/// The rulebook read from MySQL alone (commands that hold no board: reports, corrections).
pub(crate) fn rules_from(cfg: &Config, db: &Db) -> Result<Rules> {
    Ok(Rules::new(cfg, crate::mysql::people::policy_rows::read(db)?))
}

/// The rulebook and what it is laid over: the policy each day is judged by.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    base: Policy,
    book: Rulebook,
}

impl Rules {
    pub(crate) fn new(cfg: &Config, book: Rulebook) -> Rules {
        Rules {
            base: cfg.policy.clone(),
            book,
        }
    }

    /// The policy in force on `date`.
    pub(crate) fn on(&self, date: NaiveDate) -> Result<Policy> {
        Ok(crate::config::rulebook::policy_on(&self.base, &self.book, date)?)
    }

    /// The versions themselves.
    pub(crate) fn book(&self) -> &Rulebook {
        &self.book
    }
}

/// The operating-system account of this process, from its real uid (not `$USER`, which anyone
/// can set): its name, or `uid N` when the system has no name for it.
pub(crate) fn os_user() -> String {
    // SAFETY: getuid cannot fail; getpwuid_r writes only into the buffers given to it.
    unsafe {
        let uid = libc::getuid();
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let mut buf = vec![0 as libc::c_char; 4096];
        let rc = libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found);
        if rc == 0 && !found.is_null() && !pw.pw_name.is_null() {
            return std::ffi::CStr::from_ptr(pw.pw_name).to_string_lossy().into_owned();
        }
        format!("uid {uid}")
    }
}

/// The employee the roster maps to `os_user` (who acts: `by`, if given, must name them), if
/// they may act on `employee`'s `day` (`correct`, `review`, `punch void`): both employed on it,
/// the actor employed today too (by MySQL's clock, in `tz`: `authority::employed_to_act`), and
/// `rule` lets them; refused (exit 1) otherwise.
pub(crate) fn acting(
    conn: &mut Conn,
    tz: chrono_tz::Tz,
    os_user: &str,
    by: Option<&str>,
    (employee, day): (&str, NaiveDate),
    rule: fn(&Actor, &str, Option<&str>) -> Result<(), String>,
) -> Result<Actor> {
    let actor = actor(conn, os_user, by)?;
    let target = corrections::supervisor_of(conn, employee)?;
    let today = server_today(conn, tz)?;
    may_act(&actor, (employee, target), today, day, rule)?;
    Ok(actor)
}

/// The employee the roster maps to `os_user` (`by`, if given, must name them); refused (exit
/// 1) when none is, or `by` names another.
pub(crate) fn actor(conn: &mut Conn, os_user: &str, by: Option<&str>) -> Result<Actor> {
    let Some(actor) = crate::mysql::people::roster_rows::actor_of_login(conn, os_user)? else {
        return Err(Error::refused(format!(
            "the account '{}' running this is not mapped to an active employee: give its employee that \
             login in the roster's login column (org import)",
            crate::domain::text::clip(os_user)
        ))
        .into());
    };
    if let Some(by) = by.filter(|by| *by != actor.employee_id) {
        return Err(Error::refused(format!(
            "--by {by} disagrees with the account running this: '{os_user}' is {}'s",
            actor.employee_id
        ))
        .into());
    }
    Ok(actor)
}

/// The company's today by MySQL's clock: the day authority is judged on.
pub(crate) fn server_today(conn: &mut Conn, tz: chrono_tz::Tz) -> Result<NaiveDate> {
    Ok(crate::domain::day::policy::work_date(
        tz,
        crate::mysql::server::now(conn)?,
    ))
}

/// May `actor` act on `employee`'s `day`, given what MySQL knows of the employee (their
/// department's supervisor and their employment: `corrections::supervisor_of`, `None` for an
/// unknown employee)? The rules of [`acting`], without a store: a bulk review reads the
/// employees once and asks this of each punch.
pub(crate) fn may_act(
    actor: &Actor,
    (employee, known): (&str, Option<(Option<String>, Employment)>),
    today: NaiveDate,
    day: NaiveDate,
    rule: fn(&Actor, &str, Option<&str>) -> Result<(), String>,
) -> Result<(), Error> {
    let Some((supervisor, employment)) = known else {
        return Err(Error::refused(format!("unknown employee '{employee}'")));
    };
    authority::employed_to_act(actor, employee, employment, today, day).map_err(Error::refused)?;
    rule(actor, employee, supervisor.as_deref()).map_err(Error::refused)
}

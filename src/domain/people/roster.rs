//! The roster file: parsing and validating `org import` CSVs (all or nothing), and generating
//! realistic rosters of any size. Pure: no store is touched here.

use std::collections::HashMap;
use std::io::{Read, Write};

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use chrono::NaiveDate;

use crate::domain::csv_input::Refusal;
use crate::domain::people::employment::{Employment, Given};
use crate::error::Error;

pub(crate) const HEADER: [&str; 5] = ["employee_id", "name", "department_id", "department_name", "role"];

/// The optional columns, in any order after the others: the employee's operating-system account
/// (see [`valid_login`] and `domain::people::authority`) and their employment dates (see
/// `domain::people::employment`). A column left out keeps what the record holds; a blank cell
/// clears it.
pub(crate) const OPTIONAL: [&str; 3] = ["login", "start_date", "end_date"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Employee,
    Supervisor,
    /// May correct anyone's day but their own, a supervisor's included.
    Hr,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Employee => "employee",
            Role::Supervisor => "supervisor",
            Role::Hr => "hr",
        }
    }

    /// Back from [`Role::as_str`].
    pub fn parse(s: &str) -> Option<Role> {
        [Role::Employee, Role::Supervisor, Role::Hr]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// An employee's operating-system account as a roster file gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// The file has no `login` column: whatever the record holds stays.
    Keep,
    /// The column is there and blank: the employee has no account mapped.
    Clear,
    /// The account (unique in the file; taken from whoever held it before).
    Set(String),
}

/// One active employee as the boards and settle need them (read from MySQL by `crate::mysql::people::roster_rows`;
/// defined here so that the Redis side need not know the MySQL one).
#[derive(Debug, Clone)]
pub struct Member {
    pub employee_id: String,
    pub department_id: String,
    pub name: String,
    pub employment: Employment,
}

/// What the Redis roster cache was rebuilt from, in a few bytes: how many active employees were
/// read, and when any employee row had last changed before the read (MySQL's `updated_at`
/// moves on every insert and every update that changes a value, `org import`'s or one made by
/// hand). A layout rebuilds the cache when MySQL's last change differs, when the cache holds
/// another number of employees (a part evicted or lost), and when it reads another number of
/// active employees (a row deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub active: u64,
    pub changed: String,
}

impl Stamp {
    /// As the cache keeps it.
    pub fn as_text(&self) -> String {
        format!("{} {}", self.active, self.changed)
    }

    /// Back from [`Stamp::as_text`]; `None` for anything else.
    pub fn parse(text: &str) -> Option<Stamp> {
        let (active, changed) = text.split_once(' ')?;
        Some(Stamp {
            active: active.parse().ok()?,
            changed: changed.to_string(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RosterRow {
    pub employee_id: String,
    pub name: String,
    pub department_id: String,
    pub department_name: String,
    pub role: Role,
    pub login: Login,
    pub start_date: Given<NaiveDate>,
    pub end_date: Given<NaiveDate>,
}

/// An id of letters, digits, '-' and '_', 1 to 32 characters (employees and departments).
pub(crate) fn valid_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 32 && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// An operating-system account name as the roster's `login` column may give it: 1 to 32
/// letters, digits, '.', '_' or '-', not starting with '-' or '.' (what `useradd` accepts
/// by default, and no shell or terminal control).
pub(crate) fn valid_login(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && s.len() <= 32
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Check an id given on the command line: a usage error if malformed.
pub(crate) fn check_id(what: &str, s: &str) -> Result<(), Error> {
    if valid_id(s) {
        Ok(())
    } else {
        Err(Error::input(format!(
            "invalid {what} '{}': 1 to 32 letters, digits, '-' or '_'",
            crate::domain::text::clip(s)
        )))
    }
}

/// The most employees a roster file may hold (ten times the company's 100,000).
pub(crate) const MAX_ROWS: u64 = 1_000_000;

/// Parse a whole roster file. Any bad row rejects the file: the error names the bad lines.
pub fn parse(reader: impl Read) -> Result<Vec<RosterRow>, Error> {
    read(reader)?.map_err(|bad| rejection(&bad))
}

/// The rejection of a file with bad rows, in one line.
pub(crate) fn rejection(bad: &[Refusal]) -> Error {
    Error::input(rejected(bad))
}

/// [`parse`], with every bad row given back (for `--errors FILE`) rather than folded into one
/// error line; a file that cannot be read at all is still the error.
pub(crate) fn read(reader: impl Read) -> Result<Result<Vec<RosterRow>, Vec<Refusal>>, Error> {
    let (mut rdr, at) = crate::domain::csv_input::open_named(reader, "roster", &HEADER, &OPTIONAL)?;
    let (login_at, start_at, end_at) = (at[0], at[1], at[2]);
    let width = HEADER.len() + at.iter().flatten().count();
    let mut rows = Vec::new();
    let mut bad: Vec<Refusal> = Vec::new();
    let mut across = AcrossRows::default();
    for rec in crate::domain::csv_input::records(&mut rdr, "roster", MAX_ROWS) {
        let Some((rec, line)) = crate::domain::csv_input::record_or_refusal(rec?, &mut bad) else {
            continue;
        };
        if rec.len() != width {
            bad.push(Refusal {
                line,
                reason: format!("expected {width} fields, found {}", rec.len()),
            });
            continue;
        }
        let f = |i: usize| rec.get(i).unwrap_or("").to_string();
        let (employee_id, name, department_id, department_name) = (f(0), f(1), f(2), f(3));
        let mut problems = Vec::new();
        let role = one_row(&rec, &mut problems);
        let login = match login_at.map(|i| &rec[i]) {
            None => Login::Keep,
            Some("") => Login::Clear,
            Some(l) => {
                if let Err(why) = crate::domain::text::check("login", l) {
                    problems.push(why);
                } else if !valid_login(l) {
                    problems.push(format!(
                        "login '{}' must be 1 to 32 letters, digits, '.', '_' or '-', not starting with '-' or '.'",
                        crate::domain::text::clip(l)
                    ));
                }
                Login::Set(l.to_string())
            }
        };
        let start_date = date_field(&rec, start_at, "start_date", &mut problems);
        let end_date = date_field(&rec, end_at, "end_date", &mut problems);
        if let (Given::Set(s), Given::Set(e)) = (&start_date, &end_date) {
            if e < s {
                problems.push(format!("end_date {e} is before start_date {s}"));
            }
        }
        across.check(line, &rec, login_at, role, &mut problems);
        match (problems.is_empty(), role) {
            (true, Some(role)) => rows.push(RosterRow {
                employee_id,
                name,
                department_id,
                department_name,
                role,
                login,
                start_date,
                end_date,
            }),
            _ => bad.push(Refusal {
                line,
                reason: problems.join("; "),
            }),
        }
    }
    if !bad.is_empty() {
        return Ok(Err(bad));
    }
    if rows.is_empty() {
        return Err(Error::input("roster rejected: the file has no employee rows"));
    }
    Ok(Ok(rows))
}

/// An optional date column's cell: left out, blank (cleared) or a `YYYY-MM-DD` day.
fn date_field(rec: &csv::StringRecord, at: Option<usize>, what: &str, problems: &mut Vec<String>) -> Given<NaiveDate> {
    match at.map(|i| &rec[i]) {
        None => Given::Keep,
        Some("") => Given::Clear,
        Some(v) => match crate::domain::dates::parse_day(v) {
            Ok(d) => Given::Set(d),
            Err(why) => {
                problems.push(format!("{what} '{}': {why}", crate::domain::text::clip(v)));
                Given::Keep
            }
        },
    }
}

/// The rejection in one error line (at most 300 characters, `error: ` included): the first bad
/// lines with why, then the others by number, as many as fit.
fn rejected(bad: &[Refusal]) -> String {
    let head = format!("roster rejected, nothing written: {} bad line(s): ", bad.len());
    let budget = 293usize.saturating_sub(head.len());
    let mut parts: Vec<String> = Vec::new();
    let mut used = 0;
    let mut i = 0;
    while let Some(Refusal { line, reason: why }) = bad.get(i) {
        let item = format!("line {line}: {why}");
        // Room is kept for naming the lines that follow, unless this is the last.
        let room = if i + 1 == bad.len() {
            budget
        } else {
            budget.saturating_sub(60)
        };
        if used + 3 + item.chars().count() > room {
            break;
        }
        used += 3 + item.chars().count();
        parts.push(item);
        i += 1;
    }
    if i < bad.len() {
        let mut also = String::from("also");
        for (k, Refusal { line, .. }) in bad[i..].iter().enumerate() {
            let more = format!(" line {line},");
            if used + 3 + also.len() + more.len() + 16 > budget {
                also.push_str(&format!(" ... ({} more)", bad.len() - i - k));
                break;
            }
            also.push_str(&more);
        }
        parts.push(also.trim_end_matches(',').to_string());
    }
    format!("{head}{}", parts.join(" | "))
}

/// The rules of one row on its own (fields present, ids well-formed, names fit, a known
/// role); returns the role when it is one.
fn one_row(rec: &csv::StringRecord, problems: &mut Vec<String>) -> Option<Role> {
    for (i, what) in HEADER.iter().enumerate() {
        if rec[i].is_empty() {
            problems.push(format!("missing {what}"));
        }
    }
    // Text is data, never control: a field holding ESC, CR, U+202E, ... refuses the file.
    let mut control = [false; 5];
    for (i, what) in HEADER.iter().enumerate() {
        if let Err(why) = crate::domain::text::check(what, &rec[i]) {
            control[i] = true;
            problems.push(why);
        }
    }
    for (i, what) in [(0, "employee_id"), (2, "department_id")] {
        let v = &rec[i];
        if !v.is_empty() && !control[i] && !valid_id(v) {
            problems.push(format!(
                "{what} '{}' must be 1 to 32 letters, digits, '-' or '_'",
                crate::domain::text::clip(v)
            ));
        }
    }
    if rec[1].chars().count() > 200 || rec[3].chars().count() > 200 {
        problems.push("name longer than 200 characters".into());
    }
    match &rec[4] {
        "" => None,
        _ if control[4] => None,
        known if Role::parse(known).is_some() => Role::parse(known),
        other => {
            problems.push(format!(
                "unknown role '{}' (employee, supervisor or hr)",
                crate::domain::text::clip(other)
            ));
            None
        }
    }
}

/// The rules that span rows: an employee once, a department named one way, one supervisor per
/// department, a login once. Each remembers the line that came first, for the message.
#[derive(Default)]
struct AcrossRows {
    seen: HashMap<String, u64>,
    logins: HashMap<String, u64>,
    dept_names: HashMap<String, (String, u64)>,
    supervisors: HashMap<String, u64>,
}

impl AcrossRows {
    fn check(
        &mut self,
        line: u64,
        rec: &csv::StringRecord,
        login_at: Option<usize>,
        role: Option<Role>,
        problems: &mut Vec<String>,
    ) {
        let (id, dept, dept_name) = (&rec[0], &rec[2], &rec[3]);
        if !id.is_empty() {
            if let Some(first) = self.seen.insert(id.to_string(), line) {
                problems.push(format!("duplicate employee_id '{id}' (first on line {first})"));
            }
        }
        if let Some(login) = login_at.and_then(|i| rec.get(i)).filter(|l| !l.is_empty()) {
            if let Some(first) = self.logins.insert(login.to_string(), line) {
                problems.push(format!(
                    "login '{}' is already given on line {first}: one employee per account",
                    crate::domain::text::clip(login)
                ));
            }
        }
        if !dept.is_empty() && !dept_name.is_empty() {
            match self.dept_names.get(dept) {
                Some((n, first)) if n != dept_name => problems.push(format!(
                    "department '{dept}' is named '{dept_name}' here but '{n}' on line {first}"
                )),
                Some(_) => {}
                None => {
                    self.dept_names.insert(dept.to_string(), (dept_name.to_string(), line));
                }
            }
        }
        if role == Some(Role::Supervisor) && !dept.is_empty() {
            if let Some(first) = self.supervisors.get(dept) {
                problems.push(format!("department '{dept}' already has a supervisor on line {first}"));
            } else {
                self.supervisors.insert(dept.to_string(), line);
            }
        }
    }
}

const FIRST: [&str; 24] = [
    "Ada", "Bruno", "Chen", "Dana", "Emeka", "Fatima", "Gustav", "Hana", "Ivan", "Julia", "Kofi", "Lena", "Mateo",
    "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tariq", "Uma", "Victor", "Wen", "Yara",
];
const LAST: [&str; 24] = [
    "Abe", "Berger", "Costa", "Diallo", "Evans", "Fischer", "Garcia", "Haddad", "Ito", "Jensen", "Kim", "Lopez",
    "Moreau", "Nowak", "Okafor", "Petrov", "Quist", "Rossi", "Singh", "Tanaka", "Ueda", "Varga", "Weber", "Zhou",
];
const UNITS: [&str; 12] = [
    "Sales",
    "Support",
    "Logistics",
    "Finance",
    "Engineering",
    "Marketing",
    "Legal",
    "Facilities",
    "Research",
    "Procurement",
    "Quality",
    "Operations",
];

/// Department sizes that sum to `employees`: uneven (a few big departments, many small ones),
/// each at least 1 (its supervisor). Deterministic for a seed.
pub(crate) fn department_sizes(employees: u32, departments: u32, seed: u64) -> Vec<u32> {
    let departments = departments.clamp(1, employees.max(1));
    let mut rng = StdRng::seed_from_u64(seed);
    // Log-normal-ish weights: exp of a sum of uniforms.
    let weights: Vec<f64> = (0..departments)
        .map(|_| (rng.random_range(0.0..1.0f64) * 2.5).exp())
        .collect();
    let total: f64 = weights.iter().sum();
    let spare = employees - departments;
    let mut sizes: Vec<u32> = weights
        .iter()
        .map(|w| 1 + (w / total * spare as f64).floor() as u32)
        .collect();
    let mut assigned: u32 = sizes.iter().sum();
    let mut i = 0;
    while assigned < employees {
        let len = sizes.len();
        sizes[i % len] += 1;
        assigned += 1;
        i += 1;
    }
    sizes
}

/// Write a roster CSV of `employees` people in `departments` departments, one supervisor each.
pub fn generate(mut w: impl Write, employees: u32, departments: u32, seed: u64) -> std::io::Result<()> {
    let sizes = department_sizes(employees, departments, seed);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    writeln!(w, "{}", HEADER.join(","))?;
    let mut n = 0u32;
    for (d, size) in sizes.iter().enumerate() {
        let dept = format!("D{:03}", d + 1);
        let dept_name = format!("{} {}", UNITS[d % UNITS.len()], d / UNITS.len() + 1);
        for j in 0..*size {
            n += 1;
            let name = format!(
                "{} {}",
                FIRST[rng.random_range(0..FIRST.len())],
                LAST[rng.random_range(0..LAST.len())]
            );
            let role = if j == 0 { "supervisor" } else { "employee" };
            writeln!(w, "E{n:06},{name},{dept},{dept_name},{role}")?;
        }
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_fits_one_error_line_however_many_lines_are_bad() {
        let r = |line: u64, reason: String| Refusal { line, reason };
        let bad: Vec<Refusal> = (2..1002)
            .map(|l| r(l, format!("missing name {}", "x".repeat(40))))
            .collect();
        let m = rejected(&bad);
        assert!(m.chars().count() <= 293, "{}", m.chars().count());
        assert!(
            m.contains("1000 bad line(s): line 2: missing name") && m.contains("also line"),
            "{m}"
        );
        assert!(m.ends_with("more)"), "{m}");
        let few = rejected(&[r(3, "missing name".into()), r(4, "missing role".into())]);
        assert_eq!(
            few,
            "roster rejected, nothing written: 2 bad line(s): line 3: missing name | line 4: missing role"
        );
    }

    #[test]
    fn a_stamp_reads_back_as_written_and_nothing_else_reads_as_one() {
        let s = Stamp {
            active: 1_000_000,
            changed: "2026-12-01 08:11:54.902415".into(),
        };
        assert_eq!(Stamp::parse(&s.as_text()), Some(s));
        let empty = Stamp {
            active: 0,
            changed: String::new(),
        };
        assert_eq!(Stamp::parse(&empty.as_text()), Some(empty));
        for bad in ["", "x 2026-12-01", "12"] {
            assert_eq!(Stamp::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn generated_roster_parses_with_one_supervisor_per_department() {
        let mut buf = Vec::new();
        generate(&mut buf, 2_000, 37, 7).unwrap();
        let rows = parse(&buf[..]).unwrap();
        assert_eq!(rows.len(), 2_000);
        let sups = rows.iter().filter(|r| r.role == Role::Supervisor).count();
        assert_eq!(sups, 37);
        let sizes = department_sizes(100_000, 500, 42);
        assert_eq!(sizes.iter().sum::<u32>(), 100_000);
        assert!(
            sizes.iter().max().unwrap() > &(3 * sizes.iter().min().unwrap()),
            "uneven sizes"
        );
    }

    #[test]
    fn the_login_column_is_optional_and_its_presence_decides_what_an_import_does() {
        let without = parse("employee_id,name,department_id,department_name,role\nE1,A,D1,S,hr\n".as_bytes()).unwrap();
        assert_eq!((without[0].role, &without[0].login), (Role::Hr, &Login::Keep));
        let with = parse(
            "employee_id,name,department_id,department_name,role,login\nE1,A,D1,S,supervisor,ann\nE2,B,D1,S,employee,\n"
                .as_bytes(),
        )
        .unwrap();
        assert_eq!(with[0].login, Login::Set("ann".into()));
        assert_eq!(with[1].login, Login::Clear);
        let short = "employee_id,name,department_id,department_name,role,login\nE1,A,D1,S,employee\n";
        assert!(parse(short.as_bytes())
            .unwrap_err()
            .to_string()
            .contains("expected 6 fields"));
    }

    #[test]
    fn every_bad_line_is_listed() {
        let csv = "employee_id,name,department_id,department_name,role\n\
                   E1,Ann,D1,Sales,supervisor\n\
                   E1,Bob,D1,Sales,employee\n\
                   E 3,Cy,D1,Sales,employee\n\
                   E4,,D1,Sales,boss\n\
                   E5,Eve,D1,Sales,supervisor\n\
                   E6,Flo,D1,Other,employee\n";
        let e = parse(csv.as_bytes()).unwrap_err().to_string();
        for l in ["line 3", "line 4", "line 5", "line 6", "line 7"] {
            assert!(e.contains(l), "{l} missing from {e}");
        }
        assert!(!e.contains("line 2:"), "{e}");
        let long = format!(
            "employee_id,name,department_id,department_name,role\n{},A,D1,S,employee\n",
            "x".repeat(33)
        );
        assert!(parse(long.as_bytes()).unwrap_err().to_string().contains("line 2"));
    }

    #[test]
    fn logins_are_plain_account_names() {
        for ok in ["root", "ana.lopez", "_svc", "u-1", "A1"] {
            assert!(valid_login(ok), "{ok}");
        }
        for bad in ["", "-x", ".x", "a b", "a\u{1b}", "é", &"x".repeat(33), "uid 0"] {
            assert!(!valid_login(bad), "{bad}");
        }
    }
}

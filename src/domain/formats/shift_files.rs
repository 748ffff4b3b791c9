//! The two CSV files of work patterns (docs/shifts.md): shifts
//! (`name,start,end` then any of `late_grace,early_grace,work_days,break,part_time`) and
//! assignments (`scope,target,from,shift`). A file with any bad line is refused whole, every
//! bad line named with its line number.

use std::collections::HashMap;
use std::io::Read;

use chrono::{NaiveTime, Weekday};

use crate::domain::csv_input::{self, Refusal};
use crate::domain::day::shift::{parse_days, Shift, DEFAULT_SHIFT};
use crate::domain::day::shifts::{check, Assignment, Scope};
use crate::error::Error;

/// The most rows a shifts or assignments file may have.
pub(crate) const MAX_ROWS: u64 = 200_000;

const SHIFT_OPTIONAL: [&str; 5] = ["late_grace", "early_grace", "work_days", "break", "part_time"];

/// A file's rows, or its bad lines.
pub(crate) type Parsed<T> = Result<Vec<T>, Vec<Refusal>>;

fn minutes(what: &str, s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .map_err(|_| format!("{what} must be whole minutes, not '{}'", crate::domain::text::clip(s)))
}

fn time(what: &str, s: &str) -> Result<NaiveTime, String> {
    NaiveTime::parse_from_str(s, "%H:%M")
        .map_err(|_| format!("{what} must be HH:MM, not '{}'", crate::domain::text::clip(s)))
}

fn flag(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "" | "0" | "false" | "no" => Ok(false),
        "1" | "true" | "yes" => Ok(true),
        _ => Err(format!(
            "part_time must be true or false, not '{}'",
            crate::domain::text::clip(s)
        )),
    }
}

/// Every row of a file through `parse`, refusing a name given twice.
fn rows<R: Read, T>(
    mut rdr: csv_input::Reader<R>,
    what: &'static str,
    mut parse: impl FnMut(&csv::StringRecord) -> Result<T, String>,
    key: impl Fn(&T) -> String,
) -> Result<Parsed<T>, Error> {
    let mut out = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    let mut bad = Vec::new();
    for rec in csv_input::records(&mut rdr, what, MAX_ROWS) {
        let Some((rec, line)) = crate::domain::csv_input::record_or_refusal(rec?, &mut bad) else {
            continue;
        };
        match parse(&rec) {
            Ok(t) => match seen.insert(key(&t), line) {
                Some(first) => bad.push(Refusal {
                    line,
                    reason: format!("{} already given on line {first}", key(&t)),
                }),
                None => out.push(t),
            },
            Err(reason) => bad.push(Refusal { line, reason }),
        }
    }
    Ok(if bad.is_empty() { Ok(out) } else { Err(bad) })
}

/// A shifts file. `work_days` not given: `default_days` (the policy's week).
pub(crate) fn read_shifts(reader: impl Read, default_days: &[Weekday]) -> Result<Parsed<Shift>, Error> {
    let (rdr, at) = csv_input::open_named(reader, "shifts", &["name", "start", "end"], &SHIFT_OPTIONAL)?;
    let parse = |rec: &csv::StringRecord| -> Result<Shift, String> {
        let opt = |i: usize| at[i].and_then(|c| rec.get(c)).unwrap_or("");
        let name = rec.get(0).unwrap_or("").to_string();
        let shift = Shift {
            start: time("start", rec.get(1).unwrap_or(""))?,
            end: time("end", rec.get(2).unwrap_or(""))?,
            late_grace_minutes: if opt(0).is_empty() {
                0
            } else {
                minutes("late_grace", opt(0))?
            },
            early_grace_minutes: if opt(1).is_empty() {
                0
            } else {
                minutes("early_grace", opt(1))?
            },
            work_days: if opt(2).is_empty() {
                default_days.to_vec()
            } else {
                parse_days(opt(2)).map_err(|e| format!("work_days: {e}"))?
            },
            break_minutes: if opt(3).is_empty() {
                0
            } else {
                minutes("break", opt(3))?
            },
            part_time: flag(opt(4))?,
            split: None,
            name,
        };
        check(&shift)?;
        Ok(shift)
    };
    rows(rdr, "shifts", parse, |s| s.name.clone())
}

/// An assignments file. `shift_known` says whether a shift name exists (`default` always does).
pub(crate) fn read_assignments(
    reader: impl Read,
    shift_known: impl Fn(&str) -> bool,
) -> Result<Parsed<Assignment>, Error> {
    let rdr = csv_input::open(reader, "assignments", &["scope", "target", "from", "shift"], &[])?;
    let parse = |rec: &csv::StringRecord| -> Result<Assignment, String> {
        if rec.len() != 4 {
            return Err(format!("expected 4 fields, found {}", rec.len()));
        }
        let scope = Scope::parse(&rec[0]).ok_or_else(|| {
            format!(
                "scope must be department or employee, not '{}'",
                crate::domain::text::clip(&rec[0])
            )
        })?;
        let what = match scope {
            Scope::Department => "department id",
            Scope::Employee => "employee id",
        };
        crate::domain::people::roster::check_id(what, &rec[1]).map_err(|e| e.to_string())?;
        let from = crate::domain::dates::parse_day(&rec[2])
            .map_err(|why| format!("invalid from date '{}': {why}", crate::domain::text::clip(&rec[2])))?;
        let shift = rec[3].to_string();
        if shift != DEFAULT_SHIFT && !shift_known(&shift) {
            return Err(format!("no shift named '{}'", crate::domain::text::clip(&shift)));
        }
        Ok(Assignment {
            scope,
            target: rec[1].to_string(),
            from,
            shift,
        })
    };
    rows(rdr, "assignments", parse, |a| {
        format!("{} {} from {}", a.scope.as_str(), a.target, a.from)
    })
}

/// The rejection of a file with bad lines, in one line (every line is in `--errors FILE`).
pub(crate) fn rejection(what: &str, bad: &[Refusal]) -> Error {
    let lines: Vec<String> = bad
        .iter()
        .take(3)
        .map(|r| format!("line {}: {}", r.line, r.reason))
        .collect();
    let more = if bad.len() > 3 { "; ..." } else { "" };
    Error::input(format!(
        "{what}: {} bad line(s), nothing imported: {}{more}",
        bad.len(),
        lines.join("; ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Weekday::*;

    #[test]
    fn a_shifts_file_with_optional_columns_in_any_order() {
        let f = "name,start,end,work_days,late_grace\nnight,22:00,06:00,mon-fri,10\nearly,06:00,14:00,\"mon,tue\",\n";
        let s = read_shifts(f.as_bytes(), &[Mon]).unwrap().unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].crosses_midnight() && s[0].late_grace_minutes == 10 && s[0].work_days.len() == 5);
        assert_eq!(s[1].work_days, vec![Mon, Tue]);
        let s = read_shifts("name,start,end\nx,08:00,12:00\n".as_bytes(), &[Sat])
            .unwrap()
            .unwrap();
        assert_eq!(s[0].work_days, vec![Sat], "the policy's week by default");
    }

    #[test]
    fn every_bad_line_is_named() {
        let f = "name,start,end,part_time\nok,08:00,12:00,yes\nbad,8h,12:00,\nsame,08:00,08:00,\nok,09:00,13:00,\ndefault,09:00,18:00,\n";
        let bad = read_shifts(f.as_bytes(), &[Mon]).unwrap().unwrap_err();
        let lines: Vec<u64> = bad.iter().map(|r| r.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6], "{bad:?}");
        assert!(bad[2].reason.contains("already given on line 2"));
        let e = rejection("shifts", &bad).to_string();
        assert!(
            e.starts_with("shifts: 4 bad line(s), nothing imported: line 3: start must be HH:MM"),
            "{e}"
        );
    }

    #[test]
    fn assignments_name_known_shifts_and_valid_targets() {
        let known = |s: &str| s == "night";
        let f = "scope,target,from,shift\ndepartment,D1,2026-12-01,night\nemployee,E1,2026-12-15,default\n";
        let a = read_assignments(f.as_bytes(), known).unwrap().unwrap();
        assert_eq!(a[1].scope, Scope::Employee);
        let f = "scope,target,from,shift\nteam,D1,2026-12-01,night\ndepartment,D1,2026-13-01,night\nemployee,E1,2026-12-01,late\n";
        let bad = read_assignments(f.as_bytes(), known).unwrap().unwrap_err();
        assert_eq!(bad.iter().map(|r| r.line).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert!(bad[2].reason.contains("no shift named 'late'"));
    }
}

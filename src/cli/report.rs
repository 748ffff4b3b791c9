//! `attendance report day|absent|employee|dept|month|timesheet|payroll|corrections|punches|runs`: HR's answers from MySQL;
//! `report now`: the roll call, from Redis.

use std::io::{BufWriter, IsTerminal, Write};

use anyhow::{Context, Result};
use chrono::{Datelike, Duration, NaiveDate};

use super::Ctx;
use crate::cli::{DateRange, ReportCommand, ReportFormat};
use crate::domain::dates::TypedTime;
use crate::domain::day::policy::DayStatus;
use crate::domain::report::month;
use crate::domain::report::table::RowWriter;
use crate::domain::report::table::{within, Format, Table};
use crate::domain::report::xlsx::{MonthSheet, PrintSheet};
use crate::domain::text::inert;
use crate::error::Error;
use crate::files::NewFile;
use crate::ops::report::roll_call;
use crate::ops::report::{self, Query};

/// `--date`, or yesterday (the last day settle may have written).
fn day_or_yesterday(ctx: &Ctx, date: Option<NaiveDate>) -> NaiveDate {
    date.unwrap_or_else(|| ctx.today() - Duration::days(1))
}

/// `--from`/`--to`, by default this month up to today.
fn range(ctx: &Ctx, r: &DateRange) -> (NaiveDate, NaiveDate) {
    let today = ctx.today();
    (
        r.from.unwrap_or(today.with_day(1).unwrap_or(today)),
        r.to.unwrap_or(today),
    )
}

/// The question and how to print its answer (`report now` is not a question to MySQL).
fn query(ctx: &Ctx, cmd: ReportCommand) -> Option<(Query, ReportFormat)> {
    Some(match cmd {
        ReportCommand::Now { .. } | ReportCommand::Month { .. } | ReportCommand::Timesheet { .. } => return None,
        ReportCommand::Day { date, dept, format } => {
            let date = day_or_yesterday(ctx, date);
            (Query::Day { date, dept }, format)
        }
        ReportCommand::Absent { date, dept, format } => {
            let date = day_or_yesterday(ctx, date);
            (Query::Absent { date, dept }, format)
        }
        ReportCommand::Employee {
            employee_id,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (
                Query::Employee {
                    id: employee_id,
                    from,
                    to,
                },
                format,
            )
        }
        ReportCommand::Dept {
            department_id,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (
                Query::Dept {
                    id: department_id,
                    from,
                    to,
                },
                format,
            )
        }
        ReportCommand::Payroll { range: r, format } => {
            let (from, to) = range(ctx, &r);
            (Query::Payroll { from, to }, format)
        }
        ReportCommand::Corrections {
            employee,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (Query::Corrections { employee, from, to }, format)
        }
        ReportCommand::Punches {
            employee,
            dept,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (
                Query::Punches {
                    employee,
                    dept,
                    from,
                    to,
                },
                format,
            )
        }
        ReportCommand::Runs {
            date,
            limit,
            failures,
            format,
        } => (Query::Runs { date, limit, failures }, format),
    })
}

pub(crate) fn run(ctx: &Ctx, cmd: ReportCommand) -> Result<()> {
    if let ReportCommand::Now {
        dept,
        counts,
        at,
        format,
    } = cmd
    {
        return now(ctx, dept.as_deref(), counts, at, &format);
    }
    if let ReportCommand::Month { month, dept, format } = cmd {
        return month_sheet(ctx, month, dept.as_deref(), &format);
    }
    if let ReportCommand::Timesheet {
        employee,
        month,
        format,
    } = cmd
    {
        return timesheet(ctx, &employee, month, &format);
    }
    let (q, format) = query(ctx, cmd).expect("a report from MySQL");
    refuse_binary_on_terminal(&format)?;
    if let (Query::Payroll { from, to }, Format::Csv | Format::Json) = (&q, format.get()) {
        return payroll_streamed(ctx, *from, *to, &format);
    }
    let table = report::run(&ctx.cfg, &q)?;
    match essential(&q) {
        Some(keep) if format.get() == Format::Table => {
            let mut text = format!("{}\n", heading(&q));
            text += &if format.wide {
                table.to_table()
            } else {
                with_other(&table, keep).narrow(keep).to_table_within(TERMINAL)
            };
            text.push('\n');
            emit(text.as_bytes(), &format)?;
        }
        // Payroll's workbook is printed too; it keeps no title row, so an import takes it as it is.
        _ if matches!(q, Query::Payroll { .. }) && format.get() == Format::Xlsx => {
            let sheet = PrintSheet {
                name: &title(&q),
                title: None,
                table: &table,
                // employee, name
                key_columns: 2,
            };
            emit(&crate::domain::report::xlsx::print_workbook(&[sheet])?, &format)?;
        }
        _ => print(&table, &title(&q), &format)?,
    }
    if table.rows.is_empty() && format.get() == Format::Table {
        ctx.say("no rows (has the day been settled?)");
    }
    Ok(())
}

/// `report now`: the roll call, and on stderr how many are in, where, as of when.
fn now(ctx: &Ctx, dept: Option<&str>, counts: bool, at: Option<TypedTime>, format: &ReportFormat) -> Result<()> {
    refuse_binary_on_terminal(format)?;
    let n = roll_call::now(&ctx.cfg, dept, at)?;
    let (table, what) = if counts {
        (n.roll.counts(), "roll call counts")
    } else {
        (n.roll.people(&n.names, ctx.cfg.timezone), "roll call")
    };
    print(&table, &format!("{what} {}", n.date), format)?;
    let with = n.roll.departments.iter().filter(|d| d.in_now > 0).count();
    let night = match n.roll.in_from_day_before() {
        0 => String::new(),
        k => format!(
            " ({k} on a shift that began on {})",
            n.date.pred_opt().map_or_else(String::new, |d| d.to_string())
        ),
    };
    ctx.say(format!(
        "{} in right now{night}, in {with} of {} department(s), as of {}",
        n.roll.in_now(),
        n.roll.departments.len(),
        crate::domain::dates::wall_clock(n.at, "%Y-%m-%d %H:%M:%S")
    ));
    Ok(())
}

/// `report month`: the sheet as a table (a title above, the legend below), CSV, JSON, or a
/// workbook with a sheet per department.
fn month_sheet(ctx: &Ctx, first: NaiveDate, dept: Option<&str>, format: &ReportFormat) -> Result<()> {
    refuse_binary_on_terminal(format)?;
    if let f @ (Format::Csv | Format::Json) = format.get() {
        return stream(format, |w| {
            let mut out = RowWriter::new(w, &month::MonthSheet::new(first).columns(), f, format.csv_raw)?;
            let mut sum = month::SheetSum::default();
            report::month_each(&ctx.cfg, first, dept, &mut |part| {
                for row in part.sheet.rows(&part.names, None, &mut sum) {
                    out.row(&row)?;
                }
                Ok(())
            })?;
            let totals = sum.row();
            end(out.finish(totals.as_deref())?, f)
        });
    }
    let m = report::month(&ctx.cfg, first, dept)?;
    let month = first.format("%B %Y").to_string();
    let bytes = match format.get() {
        Format::Xlsx => {
            let sheets: Vec<MonthSheet> = m
                .sheet
                .departments()
                .into_iter()
                .map(|d| {
                    let name = m.departments.get(&d).map_or("", |n| n.as_str());
                    let head = format!("{d} {name}");
                    let title = [ctx.cfg.company.as_str(), head.trim_end(), &month]
                        .into_iter()
                        .filter(|p| !p.is_empty())
                        .collect::<Vec<_>>()
                        .join(" \u{2014} ");
                    let table = m.sheet.table(&m.names, Some(&d));
                    MonthSheet { name: d, title, table }
                })
                .collect();
            crate::domain::report::xlsx::month_workbook(first, &sheets, &month::legend())?
        }
        Format::Table if !format.wide => {
            let table = m.sheet.table(&m.names, None);
            let mut text = format!("month sheet, {month}, {}\n", dept.unwrap_or("all departments"));
            text.push_str(&table.narrow(MONTH).to_table_within(TERMINAL));
            text.push_str("\n(--wide: a column per day, with its code)\n");
            text.into_bytes()
        }
        Format::Table => {
            let table = m.sheet.table(&m.names, None);
            let mut text = format!("month sheet, {month}, {}\n", dept.unwrap_or("all departments"));
            text.push_str(&table.render(Format::Table, format.csv_raw)?);
            let legend: Vec<String> = month::legend()
                .rows
                .iter()
                .map(|r| format!("{} {}", r[0].plain(), r[1].plain()))
                .collect();
            text.push_str(&format!("\nlegend: {}\n", legend.join(" \u{b7} ")));
            text.into_bytes()
        }
        text => render(&m.sheet.table(&m.names, None), text, format.csv_raw)?,
    };
    emit(&bytes, format)?;
    if m.sheet.departments().is_empty() && format.get() == Format::Table {
        ctx.say("no rows (has the month been settled?)");
    }
    Ok(())
}

/// `report payroll` as CSV or JSON, a slice of employees at a time.
fn payroll_streamed(ctx: &Ctx, from: NaiveDate, to: NaiveDate, format: &ReportFormat) -> Result<()> {
    let f = format.get();
    stream(format, |w| {
        let mut out: Option<RowWriter<&mut dyn Write>> = None;
        let mut w = Some(w);
        report::payroll_each(&ctx.cfg, from, to, &mut |part| {
            if let Some(w) = w.take() {
                out = Some(RowWriter::new(w, &part.columns, f, format.csv_raw)?);
            }
            if let Some(out) = &mut out {
                for row in &part.rows {
                    out.row(row)?;
                }
            }
            Ok(())
        })?;
        match out {
            Some(out) => end(out.finish(None)?, f),
            None => Ok(()),
        }
    })
}

/// The end of a streamed report: JSON's document ends with a newline (CSV's last record has one).
fn end(w: &mut dyn Write, format: Format) -> Result<()> {
    if format == Format::Json {
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// A report written as its rows come (the month sheet and payroll as CSV or JSON): to stdout,
/// or to `-o FILE` whole or not at all, as every report (a temporary file renamed over FILE once
/// complete). On an error nothing buffered is written out.
fn stream(format: &ReportFormat, fill: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    const BUFFER: usize = 1 << 16;
    match &format.output {
        Some(path) => {
            let file = NewFile::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let mut w = BufWriter::with_capacity(BUFFER, file);
            let filled = fill(&mut w);
            if let Err(e) = filled {
                let _ = w.into_parts();
                return Err(e);
            }
            w.into_inner()
                .map_err(std::io::IntoInnerError::into_error)
                .and_then(NewFile::commit)
                .with_context(|| format!("writing {}", path.display()))
        }
        None => {
            let mut w = BufWriter::with_capacity(BUFFER, std::io::stdout().lock());
            if let Err(e) = fill(&mut w) {
                let _ = w.into_parts();
                return Err(e);
            }
            w.flush()?;
            Ok(())
        }
    }
}

/// `report timesheet`: one employee's month, a row per day, with its totals.
fn timesheet(ctx: &Ctx, employee: &str, first: NaiveDate, format: &ReportFormat) -> Result<()> {
    refuse_binary_on_terminal(format)?;
    let t = report::timesheet(&ctx.cfg, employee, first)?;
    let month = first.format("%B %Y").to_string();
    let bytes = match format.get() {
        Format::Table => {
            // The month first: a long name is what a narrow terminal cuts.
            let title = format!("timesheet, {month}, {}, {employee} {}", t.department, t.name);
            let mut text = format!("{}\n", within(&inert(&title), TERMINAL.into()));
            text += &if format.wide {
                t.table.to_table()
            } else {
                t.table.narrow(TIMESHEET).to_table_within(TERMINAL)
            };
            text.push('\n');
            text.into_bytes()
        }
        Format::Xlsx => {
            let head = [
                ctx.cfg.company.as_str(),
                &format!("{employee} {}", t.name),
                &t.department,
                &month,
            ]
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" \u{2014} ");
            crate::domain::report::xlsx::print_workbook(&[PrintSheet {
                name: &format!("timesheet {employee}"),
                title: Some(head),
                table: &t.table,
                // The date and its weekday say whose line it is.
                key_columns: 2,
            }])?
        }
        text => render(&t.table, text, format.csv_raw)?,
    };
    emit(&bytes, format)
}

/// A workbook is binary: on a terminal it would only garble the screen.
fn refuse_binary_on_terminal(format: &ReportFormat) -> Result<()> {
    if format.get() == Format::Xlsx && format.output.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::input("--format xlsx writes a binary workbook: give -o FILE (or redirect stdout)").into());
    }
    Ok(())
}

/// Render a report as asked, to stdout or its file.
fn print(table: &Table, title: &str, format: &ReportFormat) -> Result<()> {
    let bytes = match format.get() {
        Format::Xlsx => crate::domain::report::xlsx::workbook(&[(title, table)])?,
        text => render(table, text, format.csv_raw)?,
    };
    emit(&bytes, format)
}

/// A table as text (a table, CSV or JSON), ending with a newline.
fn render(table: &Table, format: Format, csv_raw: bool) -> Result<Vec<u8>> {
    let mut text = table.render(format, csv_raw)?;
    // CSV ends its last record with a newline already.
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text.into_bytes())
}

/// The bytes of a report, to stdout or its file.
fn emit(bytes: &[u8], format: &ReportFormat) -> Result<()> {
    match &format.output {
        // Whole or not at all: a full disk leaves the previous report as it was.
        Some(path) => crate::files::write(path, bytes)?,
        None => crate::output::bytes(bytes)?,
    }
    Ok(())
}

/// The report's name: a workbook's sheet is called by it.
fn title(q: &Query) -> String {
    match q {
        Query::Day { date, .. } => format!("day {date}"),
        Query::Absent { date, .. } => format!("absent {date}"),
        Query::Employee { id, .. } => format!("employee {id}"),
        Query::Dept { id, .. } => format!("dept {id}"),
        Query::Runs { failures: true, .. } => "settle failures".into(),
        Query::Runs { .. } => "settle runs".into(),
        Query::Payroll { from, to } => format!("payroll {from} {to}"),
        Query::Corrections { .. } => "corrections".into(),
        Query::Punches { .. } => "punches".into(),
    }
}

/// A narrow view that keeps some status columns and an `other` column: `other` sums the
/// statuses it leaves out, so that the counts shown add up to each row's headcount or days
/// (`late_and_early` and the rest included). Other views are the table itself.
fn with_other(table: &Table, keep: &[(&str, &str)]) -> Table {
    if !keep.iter().any(|(c, _)| *c == "other") {
        return table.clone();
    }
    let left_out: Vec<&str> = DayStatus::ALL
        .iter()
        .map(|s| s.as_str())
        .filter(|s| !keep.iter().any(|(c, _)| c == s))
        .collect();
    table.with_sum("other", &left_out)
}

/// The width a report's table keeps to by default: a terminal's classic 80 columns.
const TERMINAL: u16 = 80;

/// The month sheet's totals, without the day columns (`--wide` has them).
const MONTH: &[(&str, &str)] = &[
    ("department", "dept"),
    ("employee", "employee"),
    ("name", "name"),
    ("present_days", "present"),
    ("late_days", "late"),
    ("absent_days", "absent"),
    ("leave_days", "leave"),
    ("worked_minutes", "worked"),
];

/// The timesheet's columns in 80 columns (`--wide`: every column, the shift and punches too).
const TIMESHEET: &[(&str, &str)] = &[
    ("date", "date"),
    ("weekday", "day"),
    ("status", "status"),
    ("first_in", "in"),
    ("last_out", "out"),
    ("worked_minutes", "worked"),
    ("overtime_minutes", "overtime"),
];

/// The columns of a report's table in 80 columns, with their headers there (`--wide`: every
/// column as CSV has it); `None`: the report's table is shown whole.
fn essential(q: &Query) -> Option<&'static [(&'static str, &'static str)]> {
    Some(match q {
        Query::Day { .. } => &[
            ("department", "dept"),
            ("headcount", "staff"),
            ("present", "present"),
            ("late", "late"),
            ("early_leave", "early"),
            ("late_and_early", "both"),
            ("absent", "absent"),
            ("on_leave", "leave"),
            ("other", "other"),
        ],
        Query::Absent { .. } => &[("employee", "employee"), ("name", "name"), ("department", "department")],
        Query::Employee { .. } => &[
            ("date", "date"),
            ("status", "status"),
            ("first_in", "in"),
            ("last_out", "out"),
            ("worked_minutes", "worked"),
        ],
        Query::Dept { .. } => &[
            ("employee", "employee"),
            ("name", "name"),
            ("days", "days"),
            ("present", "present"),
            ("late", "late"),
            ("absent", "absent"),
            ("on_leave", "leave"),
            ("other", "other"),
        ],
        Query::Payroll { .. } => &[
            ("employee", "employee"),
            ("name", "name"),
            ("days_worked", "days"),
            ("absent_days", "absent"),
            ("late_count", "late"),
            ("worked_minutes", "worked"),
            ("overtime_minutes", "overtime"),
        ],
        Query::Punches { .. } => &[
            ("employee", "employee"),
            ("department", "dept"),
            ("at", "at"),
            ("kind", "kind"),
            ("source", "source"),
            ("how", "how"),
        ],
        Query::Corrections { .. } | Query::Runs { .. } => return None,
    })
}

/// The title line above a report's table: the report, its dates, its department.
fn heading(q: &Query) -> String {
    let dept = |d: &Option<String>| d.clone().unwrap_or_else(|| "all departments".into());
    let span = |from: &NaiveDate, to: &NaiveDate| format!("{from} to {to}");
    match q {
        Query::Day { date, dept: d } => format!("day report, {date}, {}", dept(d)),
        Query::Absent { date, dept: d } => format!("absent, {date}, {}", dept(d)),
        Query::Employee { id, from, to } => format!("employee {id}, {}", span(from, to)),
        Query::Dept { id, from, to } => format!("department {id}, {}", span(from, to)),
        Query::Payroll { from, to } => format!("payroll, {}, all departments", span(from, to)),
        Query::Punches {
            employee,
            dept: d,
            from,
            to,
        } => {
            let who = employee.as_ref().map_or(String::new(), |e| format!(", employee {e}"));
            format!("punches, {}, {}{who}", span(from, to), dept(d))
        }
        Query::Corrections { .. } | Query::Runs { .. } => title(q),
    }
}

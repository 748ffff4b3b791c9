//! HR's reports as an Excel workbook (rust_xlsxwriter): a sheet per report, the header frozen
//! and filterable, counts and minutes as numbers, days, times and instants as Excel dates, so
//! that a spreadsheet can sum and sort them; the totals row in bold. The cells are the very
//! cells of the CSV and JSON renderings ([`Table`]), only typed.
//!
//! The sheets HR prints (the month sheet, payroll, the timesheet) are laid out for paper:
//! landscape, one page wide, the title rows and the id and name columns repeated on every page,
//! and minutes as durations (an Excel time value, minutes / 1440, shown `[h]:mm`, so that a
//! total past 24 hours reads as hours), their column headed `..._hours`.

use anyhow::{Context, Result};
use chrono::{Datelike, NaiveDate};
use rust_xlsxwriter::{Format, FormatAlign, Workbook, Worksheet};

use crate::domain::report::month::Code;
use crate::domain::report::table::{Cell, Table};

/// Excel's limits on a sheet name: 31 characters, none of `[]:*?/\`.
fn sheet_name(title: &str) -> String {
    let clean: String = title
        .chars()
        .map(|c| if "[]:*?/\\".contains(c) { '_' } else { c })
        .collect();
    let clean = clean.trim().trim_matches('\'');
    let name: String = clean.chars().take(31).collect();
    if name.is_empty() {
        "report".to_string()
    } else {
        name
    }
}

struct Formats {
    header: Format,
    date: Format,
    time: Format,
    datetime: Format,
    bold: Format,
    bold_date: Format,
    duration: Format,
    bold_duration: Format,
}

/// Excel's number format of a duration: hours past 24 keep counting (`[h]`).
const DURATION: &str = "[h]:mm";

/// How a sheet writes minutes: as the number (a report read by programs too), or as a
/// duration (a sheet HR prints).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Minutes {
    Numbers,
    Durations,
}

impl Formats {
    fn new() -> Formats {
        Formats {
            header: Format::new().set_bold().set_background_color("#DDEBF7"),
            date: Format::new().set_num_format("yyyy-mm-dd"),
            time: Format::new().set_num_format("hh:mm"),
            datetime: Format::new().set_num_format("yyyy-mm-dd hh:mm:ss"),
            bold: Format::new().set_bold(),
            bold_date: Format::new().set_bold().set_num_format("yyyy-mm-dd"),
            duration: Format::new().set_num_format(DURATION),
            bold_duration: Format::new().set_bold().set_num_format(DURATION),
        }
    }
}

fn write_cell(ws: &mut Worksheet, row: u32, col: u16, cell: &Cell, f: &Formats, total: bool, m: Minutes) -> Result<()> {
    let text = if total { &f.bold } else { &Format::new() };
    match cell {
        Cell::Text(s) => ws.write_string_with_format(row, col, s, text)?,
        Cell::Minutes(n) if m == Minutes::Durations => {
            let duration = if total { &f.bold_duration } else { &f.duration };
            ws.write_number_with_format(row, col, *n as f64 / 1440.0, duration)?
        }
        Cell::Int(n) | Cell::Minutes(n) => ws.write_number_with_format(row, col, *n as f64, text)?,
        Cell::Halves(n) => ws.write_number_with_format(row, col, *n as f64 / 2.0, text)?,
        Cell::Date(d) => ws.write_datetime_with_format(row, col, d, if total { &f.bold_date } else { &f.date })?,
        Cell::Time(t) => ws.write_datetime_with_format(row, col, t, &f.time)?,
        Cell::DateTime(t) => ws.write_datetime_with_format(row, col, t, &f.datetime)?,
        Cell::Null => ws,
        Cell::Typed(shown, _) => return write_cell(ws, row, col, shown, f, total, m),
    };
    Ok(())
}

/// One sheet: the header in row 1 (frozen, with a filter), then the rows; a last row whose
/// first cell is `total` is the totals row.
fn add_sheet(wb: &mut Workbook, title: &str, table: &Table, f: &Formats) -> Result<()> {
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name(title))?;
    for (col, name) in table.columns.iter().enumerate() {
        ws.write_string_with_format(0, col as u16, name, &f.header)?;
    }
    for (i, row) in table.rows.iter().enumerate() {
        let total = i + 1 == table.rows.len() && row.first() == Some(&Cell::text("total"));
        for (col, cell) in row.iter().enumerate() {
            write_cell(ws, i as u32 + 1, col as u16, cell, f, total, Minutes::Numbers)?;
        }
    }
    ws.set_freeze_panes(1, 0)?;
    if !table.columns.is_empty() {
        ws.autofilter(0, 0, table.rows.len() as u32, table.columns.len() as u16 - 1)?;
    }
    ws.autofit();
    Ok(())
}

/// A workbook of the given reports, one sheet each, as the bytes of an `.xlsx` file.
pub(crate) fn workbook(sheets: &[(&str, &Table)]) -> Result<Vec<u8>> {
    let mut wb = Workbook::new();
    let f = Formats::new();
    for (title, table) in sheets {
        add_sheet(&mut wb, title, table, &f).with_context(|| format!("writing sheet '{title}'"))?;
    }
    wb.save_to_buffer().context("building the workbook")
}

/// A sheet laid out for paper: landscape, one page wide (as many pages down as it takes), the
/// rows down to `title_rows` (its last, 0-based) and the first `key_columns` columns repeated
/// on every page.
fn printable(ws: &mut Worksheet, title_rows: u32, key_columns: u16) -> Result<()> {
    ws.set_landscape();
    // A4: the paper the company prints on (the month sheet took 35 portrait pages).
    ws.set_paper_size(9);
    ws.set_print_fit_to_pages(1, 0);
    ws.set_repeat_rows(0, title_rows)?;
    if key_columns > 0 {
        ws.set_repeat_columns(0, key_columns - 1)?;
    }
    Ok(())
}

/// A column's header in a printed sheet: a column of minutes holds durations, so
/// `worked_minutes` is `worked_hours` there.
fn printed_header(table: &Table, col: usize) -> String {
    let name = &table.columns[col];
    let minutes = table.rows.iter().any(|r| match r.get(col) {
        Some(Cell::Minutes(_)) => true,
        Some(Cell::Typed(shown, _)) => matches!(**shown, Cell::Minutes(_)),
        _ => false,
    });
    match name.strip_suffix("_minutes") {
        Some(stem) if minutes => format!("{stem}_hours"),
        _ => name.clone(),
    }
}

/// A sheet HR prints (payroll, the timesheet): an optional title in row 1, the header below it
/// (bold, frozen with the key columns, filtered over the data rows, totals left out), minutes as
/// durations, laid out for paper.
pub(crate) struct PrintSheet<'a> {
    pub name: &'a str,
    pub title: Option<String>,
    pub table: &'a Table,
    /// The leading columns that say whose a line is (ids, names, dates): frozen and repeated on
    /// every printed page.
    pub key_columns: u16,
}

/// A workbook of sheets laid out for paper, as the bytes of an `.xlsx` file.
pub(crate) fn print_workbook(sheets: &[PrintSheet]) -> Result<Vec<u8>> {
    let mut wb = Workbook::new();
    let f = Formats::new();
    for s in sheets {
        add_print_sheet(&mut wb, s, &f).with_context(|| format!("writing sheet '{}'", s.name))?;
    }
    wb.save_to_buffer().context("building the workbook")
}

fn add_print_sheet(wb: &mut Workbook, s: &PrintSheet, f: &Formats) -> Result<()> {
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name(s.name))?;
    let header_row = u32::from(s.title.is_some());
    if let Some(title) = &s.title {
        ws.write_string_with_format(0, 0, title, &Format::new().set_bold().set_font_size(14))?;
    }
    for col in 0..s.table.columns.len() {
        ws.write_string_with_format(header_row, col as u16, printed_header(s.table, col), &f.header)?;
    }
    let lines = write_lines(ws, s.table, header_row + 1, f, |_, _| None)?;
    ws.set_freeze_panes(header_row + 1, s.key_columns)?;
    if !s.table.columns.is_empty() {
        ws.autofilter(header_row, 0, header_row + lines, s.table.columns.len() as u16 - 1)?;
    }
    ws.autofit();
    printable(ws, header_row, s.key_columns)
}

/// Write a table's rows from `first_row` on, minutes as durations, the totals row (a last
/// row whose first cell is `total`) in bold; `fill` may give a cell its own format. Returns
/// how many rows are not totals.
fn write_lines(
    ws: &mut Worksheet,
    table: &Table,
    first_row: u32,
    f: &Formats,
    fill: impl Fn(usize, &Cell) -> Option<Format>,
) -> Result<u32> {
    let n = table.rows.len();
    let mut lines = 0;
    for (i, row) in table.rows.iter().enumerate() {
        let total = i + 1 == n && row.first() == Some(&Cell::text("total"));
        lines += u32::from(!total);
        let r = first_row + i as u32;
        for (col, cell) in row.iter().enumerate() {
            match fill(col, cell).filter(|_| !total) {
                Some(fmt) => {
                    ws.write_string_with_format(r, col as u16, cell.plain(), &fmt)?;
                }
                None => write_cell(ws, r, col as u16, cell, f, total, Minutes::Durations)?,
            }
        }
    }
    Ok(lines)
}

/// One department's month sheet: its title above the header.
pub(crate) struct MonthSheet {
    /// The sheet's name (the department's id).
    pub name: String,
    /// The title row: company, department, month.
    pub title: String,
    pub table: Table,
}

/// The columns before the days on a month sheet: department, employee, name.
const MONTH_KEYS: u16 = 3;

/// The month sheet as a workbook: a sheet per department, each with its title in row 1, the
/// header in row 2 (readable words) and each day's weekday in row 3 under its date, frozen
/// with the id and name columns and repeated with them on every printed page; each day's code
/// on its colour; counts as numbers, minutes as durations; the filter over the employees'
/// lines only, the totals row below it in bold. A last sheet holds the legend.
pub(crate) fn month_workbook(first: NaiveDate, sheets: &[MonthSheet], legend: &Table) -> Result<Vec<u8>> {
    let mut wb = Workbook::new();
    let f = Formats::new();
    let fills: Vec<(Code, Format)> = Code::ALL
        .iter()
        .map(|c| {
            (
                *c,
                Format::new()
                    .set_background_color(c.colour())
                    .set_align(FormatAlign::Center),
            )
        })
        .collect();
    for s in sheets {
        add_month_sheet(&mut wb, first, s, &f, &fills).with_context(|| format!("writing sheet '{}'", s.name))?;
    }
    add_sheet(&mut wb, "legend", legend, &f)?;
    wb.save_to_buffer().context("building the workbook")
}

fn add_month_sheet(
    wb: &mut Workbook,
    first: NaiveDate,
    s: &MonthSheet,
    f: &Formats,
    fills: &[(Code, Format)],
) -> Result<()> {
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name(&s.name))?;
    ws.write_string_with_format(0, 0, &s.title, &Format::new().set_bold().set_font_size(14))?;
    let centred = f.header.clone().set_align(FormatAlign::Center);
    for col in 0..s.table.columns.len() {
        let name = printed_header(&s.table, col).replace('_', " ");
        ws.write_string_with_format(1, col as u16, name, &f.header)?;
        // Under each day's date, its weekday; the other columns' cell stays a header's.
        let day = s.table.columns[col].parse::<u32>().ok().and_then(|d| first.with_day(d));
        let below = day.map_or(String::new(), |d| d.format("%a").to_string());
        ws.write_string_with_format(2, col as u16, below, &centred)?;
    }
    let lines = write_lines(ws, &s.table, 3, f, |col, cell| match cell {
        Cell::Text(t) if col >= usize::from(MONTH_KEYS) => Code::parse(t)
            .and_then(|c| fills.iter().find(|(k, _)| *k == c))
            .map(|(_, fmt)| fmt.clone()),
        _ => None,
    })?;
    ws.set_freeze_panes(3, MONTH_KEYS)?;
    if !s.table.columns.is_empty() {
        ws.autofilter(2, 0, 2 + lines, s.table.columns.len() as u16 - 1)?;
    }
    ws.autofit();
    printable(ws, 2, MONTH_KEYS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sheet_names_obey_excel() {
        assert_eq!(sheet_name("dept D/1 [x]"), "dept D_1 _x_");
        assert_eq!(sheet_name(&"e".repeat(40)).len(), 31);
        assert_eq!(sheet_name("''"), "report");
    }
}

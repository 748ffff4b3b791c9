//! HR's reports as an Excel workbook (rust_xlsxwriter): a sheet per report, the header frozen
//! and filterable, counts and minutes as numbers, days, times and instants as Excel dates, so
//! that a spreadsheet can sum and sort them; the totals row in bold. The cells are the very
//! cells of the CSV and JSON renderings ([`Table`]), only typed.

use anyhow::{Context, Result};
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
        }
    }
}

fn write_cell(ws: &mut Worksheet, row: u32, col: u16, cell: &Cell, f: &Formats, total: bool) -> Result<()> {
    let text = if total { &f.bold } else { &Format::new() };
    match cell {
        Cell::Text(s) => ws.write_string_with_format(row, col, s, text)?,
        Cell::Int(n) | Cell::Minutes(n) => ws.write_number_with_format(row, col, *n as f64, text)?,
        Cell::Halves(n) => ws.write_number_with_format(row, col, *n as f64 / 2.0, text)?,
        Cell::Date(d) => ws.write_datetime_with_format(row, col, d, if total { &f.bold_date } else { &f.date })?,
        Cell::Time(t) => ws.write_datetime_with_format(row, col, t, &f.time)?,
        Cell::DateTime(t) => ws.write_datetime_with_format(row, col, t, &f.datetime)?,
        Cell::Null => ws,
        Cell::Typed(shown, _) => return write_cell(ws, row, col, shown, f, total),
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
            write_cell(ws, i as u32 + 1, col as u16, cell, f, total)?;
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

/// One department's month sheet: its title above the header.
pub(crate) struct MonthSheet {
    /// The sheet's name (the department's id).
    pub name: String,
    /// The title row: company, department, month.
    pub title: String,
    pub table: Table,
}

/// The month sheet as a workbook: a sheet per department, each with its title in row 1 and the
/// header in row 2 (readable words), frozen with the id and name columns; each day's code on
/// its colour; counts and minutes as numbers; the filter over the employees' lines only, the
/// totals row below it in bold. A last sheet holds the legend.
pub(crate) fn month_workbook(sheets: &[MonthSheet], legend: &Table) -> Result<Vec<u8>> {
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
        add_month_sheet(&mut wb, s, &f, &fills).with_context(|| format!("writing sheet '{}'", s.name))?;
    }
    add_sheet(&mut wb, "legend", legend, &f)?;
    wb.save_to_buffer().context("building the workbook")
}

fn add_month_sheet(wb: &mut Workbook, s: &MonthSheet, f: &Formats, fills: &[(Code, Format)]) -> Result<()> {
    let ws = wb.add_worksheet();
    ws.set_name(sheet_name(&s.name))?;
    ws.write_string_with_format(0, 0, &s.title, &Format::new().set_bold().set_font_size(14))?;
    for (col, name) in s.table.columns.iter().enumerate() {
        ws.write_string_with_format(1, col as u16, name.replace('_', " "), &f.header)?;
    }
    let n = s.table.rows.len();
    for (i, row) in s.table.rows.iter().enumerate() {
        let total = i + 1 == n && row.first() == Some(&Cell::text("total"));
        let r = i as u32 + 2;
        for (col, cell) in row.iter().enumerate() {
            let fill = match cell {
                Cell::Text(t) if !total && col >= 3 => Code::parse(t).and_then(|c| fills.iter().find(|(k, _)| *k == c)),
                _ => None,
            };
            match fill {
                Some((_, fmt)) => {
                    ws.write_string_with_format(r, col as u16, cell.plain(), fmt)?;
                }
                None => write_cell(ws, r, col as u16, cell, f, total)?,
            }
        }
    }
    ws.set_freeze_panes(2, 3)?;
    let lines = n.saturating_sub(usize::from(
        n > 0 && s.table.rows[n - 1].first() == Some(&Cell::text("total")),
    ));
    if !s.table.columns.is_empty() {
        ws.autofilter(1, 0, 1 + lines as u32, s.table.columns.len() as u16 - 1)?;
    }
    ws.autofit();
    Ok(())
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

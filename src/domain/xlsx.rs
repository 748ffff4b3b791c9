//! HR's reports as an Excel workbook (rust_xlsxwriter): a sheet per report, the header frozen
//! and filterable, counts and minutes as numbers, days, times and instants as Excel dates, so
//! that a spreadsheet can sum and sort them; the totals row in bold. The cells are the very
//! cells of the CSV and JSON renderings ([`Table`]), only typed.

use anyhow::{Context, Result};
use rust_xlsxwriter::{Format, Workbook, Worksheet};

use crate::domain::table::{Cell, Table};

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
        Cell::Int(n) => ws.write_number_with_format(row, col, *n as f64, text)?,
        Cell::Date(d) => ws.write_datetime_with_format(row, col, d, if total { &f.bold_date } else { &f.date })?,
        Cell::Time(t) => ws.write_datetime_with_format(row, col, t, &f.time)?,
        Cell::DateTime(t) => ws.write_datetime_with_format(row, col, t, &f.datetime)?,
        Cell::Null => ws,
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

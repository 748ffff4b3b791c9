//! Reports as plain tables of cells, and their three renderings: a comfy-table for people,
//! CSV and JSON (an array of objects, one per row, keyed by column) for programs. The three
//! hold the very same cells, so a script and a person always read the same numbers. CSV and
//! JSON can also be written a row at a time (`RowWriter`), for the reports too big to hold.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, Timelike};
use chrono_tz::Tz;
use std::io::Write;

use anyhow::{bail, Result};
use serde_json::{Map, Value};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::domain::dates::{is_ambiguous, wall_clock};
use crate::domain::instant;
use crate::domain::text::{inert, spreadsheet_text};

/// How a report is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
    /// An Excel workbook (`crate::domain::report::xlsx`): binary, so never to a terminal.
    Xlsx,
}

impl Format {
    /// The names `--format` accepts, in the order `--help` shows them.
    pub const NAMES: [&'static str; 4] = ["table", "csv", "json", "xlsx"];
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "table" | "text" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "xlsx" => Ok(Format::Xlsx),
            _ => Err(format!("unknown format '{s}': expected table, csv, json or xlsx")),
        }
    }
}

/// One cell: text, a count, a day, a time of day, a local date and time, or nothing. Days and times print as
/// text everywhere but in a workbook, where they are real dates and times.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Text(String),
    Int(i64),
    Date(NaiveDate),
    Time(NaiveTime),
    DateTime(NaiveDateTime),
    /// A duration in minutes: `7 h 45 min` for people, the number in CSV, JSON and a workbook.
    Minutes(i64),
    /// A count of days in halves (payroll's half days): `3` or `2.5`, a number everywhere.
    Halves(u64),
    Null,
    /// A cell shown one way (table, CSV, workbook) and given to programs typed in JSON: an
    /// instant in the contract's form, a flag as a boolean, counts as an object
    /// (docs/commands.md, "The JSON contract").
    Typed(Box<Cell>, Value),
}

impl Cell {
    pub(crate) fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    pub(crate) fn plain(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Int(n) => n.to_string(),
            Cell::Date(d) => d.format("%Y-%m-%d").to_string(),
            Cell::Time(t) => t.format("%H:%M").to_string(),
            Cell::DateTime(t) => t.format("%Y-%m-%d %H:%M:%S").to_string(),
            Cell::Minutes(m) => crate::domain::day::worked::human(*m),
            Cell::Halves(n) if n % 2 == 0 => (n / 2).to_string(),
            Cell::Halves(n) => format!("{}.5", n / 2),
            Cell::Null => String::new(),
            Cell::Typed(shown, _) => shown.plain(),
        }
    }

    /// A cell shown as `shown`, in JSON as `json`.
    pub(crate) fn typed(shown: Cell, json: impl Into<Value>) -> Cell {
        Cell::Typed(Box::new(shown), json.into())
    }

    /// The cell in a CSV file: text inert and, unless `raw`, never a formula.
    pub(crate) fn csv(&self, raw: bool) -> String {
        match self {
            Cell::Text(s) if raw => inert(s).into_owned(),
            Cell::Text(s) => spreadsheet_text(&inert(s)).into_owned(),
            Cell::Minutes(m) => m.to_string(),
            Cell::Typed(shown, _) => shown.csv(raw),
            other => other.plain(),
        }
    }

    pub(crate) fn json(&self) -> Value {
        match self {
            Cell::Text(s) => Value::from(s.as_str()),
            Cell::Int(n) | Cell::Minutes(n) => Value::from(*n),
            Cell::Halves(n) if n % 2 == 0 => Value::from(n / 2),
            Cell::Halves(n) => Value::from(*n as f64 / 2.0),
            Cell::Date(_) | Cell::Time(_) | Cell::DateTime(_) => Value::from(self.plain()),
            Cell::Null => Value::Null,
            Cell::Typed(_, v) => v.clone(),
        }
    }
}

/// A column's key in JSON: one name per concept across every command (docs/commands.md).
/// Tables and CSV keep their headers; `name` is the employee's where the table has an
/// employee column, else the department's.
pub(crate) fn json_key(column: &str, columns: &[String]) -> String {
    let has_employee = columns.iter().any(|c| c == "employee");
    match column {
        "employee" => "employee_id".into(),
        "department" => "department_id".into(),
        "name" if has_employee => "employee_name".into(),
        "name" => "department_name".into(),
        "date" => "work_date".into(),
        "run" => "run_id".into(),
        "id" => "correction_id".into(),
        // The corrections report's `at` is when the correction was made (beside `by`).
        "at" if columns.iter().any(|c| c == "by") => "corrected_at".into(),
        "written" => "rows_written".into(),
        "started" => "started_at".into(),
        "finished" => "finished_at".into(),
        other => other.replace(' ', "_"),
    }
}

/// A totals row's key in JSON where it differs from its column's (the employee report's
/// totals row holds the days in `weekday` and the days by status in `status`).
pub(crate) fn totals_key(key: String) -> String {
    match key.as_str() {
        "weekday" => "days".into(),
        "status" => "counts".into(),
        _ => key,
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Cell {
        Cell::Int(n as i64)
    }
}

/// The widest a column may be and still keep its whole width in a table narrowed to a
/// terminal (a status: `missing_checkout`), room allowing.
const SHORT: usize = 16;

/// `line` cut to `width` characters, with `…` where it was cut: a title that fits a terminal.
pub(crate) fn within(line: &str, width: usize) -> String {
    if line.width() <= width {
        return line.to_string();
    }
    let mut out = String::new();
    for c in line.chars() {
        if out.width() + c.width().unwrap_or(0) + 1 > width {
            break;
        }
        out.push(c);
    }
    out.push('\u{2026}');
    out
}

/// A report: named columns and rows of cells (a totals row, if any, is the last row, its first
/// cell `total`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Table {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    pub(crate) fn new(columns: &[&str]) -> Table {
        Table {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len());
        self.rows.push(row);
    }

    /// A person's view.
    pub(crate) fn to_table(&self) -> String {
        self.comfy(None).to_string()
    }

    /// The columns a terminal shows by default (`--wide` shows all): `keep` names each kept
    /// column and the header it gets there, in the table's order; a name the table lacks is
    /// left out.
    pub(crate) fn narrow(&self, keep: &[(&str, &str)]) -> Table {
        let picked: Vec<(usize, &str)> = keep
            .iter()
            .filter_map(|(name, label)| self.columns.iter().position(|c| c == name).map(|i| (i, *label)))
            .collect();
        Table {
            columns: picked.iter().map(|(_, l)| l.to_string()).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| picked.iter().map(|(i, _)| r[*i].clone()).collect())
                .collect(),
        }
    }

    /// The table with a last column `name` holding, per row, the sum of the whole-number
    /// columns `of` (missing ones count 0): what a narrow view leaves out, summed, so that the
    /// counts it shows still add up to its row's total.
    pub(crate) fn with_sum(&self, name: &str, of: &[&str]) -> Table {
        let at: Vec<usize> = of
            .iter()
            .filter_map(|c| self.columns.iter().position(|x| x == c))
            .collect();
        let mut t = self.clone();
        t.columns.push(name.to_string());
        for r in &mut t.rows {
            let sum: i64 = at
                .iter()
                .map(|&i| match r.get(i) {
                    Some(Cell::Int(n)) => *n,
                    _ => 0,
                })
                .sum();
            r.push(Cell::Int(sum));
        }
        t
    }

    /// A person's view within `width` characters a line, a row to a line: a cell too long for
    /// its share of the width is cut short with `…` (`--wide`, CSV and JSON hold it whole), so
    /// that no row wraps, inside its columns or past the edge.
    pub(crate) fn to_table_within(&self, width: u16) -> String {
        let mut t = self.comfy(Some(1));
        for (i, keep) in self.kept_widths(width).into_iter().enumerate() {
            let constraint = match keep {
                Some(_) => comfy_table::ColumnConstraint::ContentWidth,
                // Never narrower than its header: a header that wrapped would be a row wrapped.
                None => comfy_table::ColumnConstraint::LowerBoundary(comfy_table::Width::Fixed(
                    self.columns[i].width() as u16,
                )),
            };
            if let Some(c) = t.column_mut(i) {
                c.set_constraint(constraint);
            }
        }
        t.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
        t.set_width(width);
        t.set_truncation_indicator("\u{2026}");
        t.to_string()
    }

    /// Which columns keep their whole width in `width` characters (`Some(width)`): the short
    /// ones (a date, a time, a count, minutes), as many as fit beside the others' headers,
    /// the narrowest first; the others share what is left, cut short.
    fn kept_widths(&self, width: u16) -> Vec<Option<usize>> {
        let n = self.columns.len();
        let mut kept: Vec<Option<usize>> = (0..n)
            .map(|i| {
                let widest = std::iter::once(self.columns[i].width())
                    .chain(
                        self.rows
                            .iter()
                            .map(|r| r.get(i).map_or(0, |c| inert(&c.plain()).width())),
                    )
                    .max()
                    .unwrap_or(0);
                (widest <= SHORT).then_some(widest)
            })
            .collect();
        // A border between and around the columns, a space either side of each cell.
        let room = usize::from(width).saturating_sub(3 * n + 1);
        let needed = |kept: &[Option<usize>]| -> usize {
            (0..n).map(|i| kept[i].unwrap_or_else(|| self.columns[i].width())).sum()
        };
        while needed(&kept) > room {
            let Some(widest) = (0..n).filter(|i| kept[*i].is_some()).max_by_key(|i| kept[*i]) else {
                break;
            };
            kept[widest] = None;
        }
        kept
    }

    /// The comfy-table of the cells; `lines`: the most lines a row may take.
    fn comfy(&self, lines: Option<usize>) -> comfy_table::Table {
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        t.set_header(self.columns.clone());
        for r in &self.rows {
            let mut row = comfy_table::Row::from(r.iter().map(|c| inert(&c.plain()).into_owned()));
            if let Some(n) = lines {
                row.max_height(n);
            }
            t.add_row(row);
        }
        t
    }

    /// CSV with a header line; empty cells for nothing. Control characters are made visible
    /// (`\u{1b}`); a text cell that a spreadsheet would run as a formula is written with a
    /// leading `'` unless `raw` (numbers stay numbers either way).
    pub(crate) fn to_csv(&self, raw: bool) -> anyhow::Result<String> {
        self.written(Format::Csv, raw)
    }

    /// The table through [`RowWriter`], the very bytes a streamed report writes.
    fn written(&self, format: Format, raw: bool) -> anyhow::Result<String> {
        let totals = if format == Format::Json { self.totals() } else { None };
        let data = &self.rows[..self.rows.len() - usize::from(totals.is_some())];
        let mut w = RowWriter::new(Vec::new(), &self.columns, format, raw)?;
        for r in data {
            w.row(r)?;
        }
        Ok(String::from_utf8(w.finish(totals)?)?)
    }

    /// The totals row, if the table has one (its last row, first cell `total`).
    pub(crate) fn totals(&self) -> Option<&[Cell]> {
        self.rows
            .last()
            .filter(|r| r.first() == Some(&Cell::text("total")))
            .map(Vec::as_slice)
    }

    /// `{"rows": [...], "totals": {...} or null}`: a row is an object keyed by the columns'
    /// JSON names; the totals are their own object (no label, no empty cells), never a row.
    pub(crate) fn to_json(&self) -> String {
        self.written(Format::Json, false).unwrap_or_default()
    }

    /// Render as `table`, `csv` or `json`; `csv_raw`: CSV without the formula guard.
    pub(crate) fn render(&self, format: Format, csv_raw: bool) -> anyhow::Result<String> {
        match format {
            Format::Csv => self.to_csv(csv_raw),
            Format::Json => Ok(self.to_json()),
            Format::Table => Ok(self.to_table()),
            Format::Xlsx => anyhow::bail!("a workbook is not text: crate::domain::report::xlsx::workbook writes it"),
        }
    }
}

/// A UTC instant as a local date and time in the company's zone, to the second; in the hour
/// the clocks go back, text with its offset (a spreadsheet's date-time has no offset to show).
/// In JSON, the instant in the contract's form.
pub(crate) fn local(tz: Tz, t: Option<NaiveDateTime>) -> Cell {
    t.map_or(Cell::Null, |t| {
        let zoned = t.and_utc().with_timezone(&tz);
        let json = instant::text_in(tz, &zoned);
        if is_ambiguous(zoned) {
            return Cell::typed(Cell::Text(wall_clock(zoned, "%Y-%m-%d %H:%M:%S")), json);
        }
        let local = zoned.naive_local();
        Cell::typed(Cell::DateTime(local.with_nanosecond(0).unwrap_or(local)), json)
    })
}

/// A UTC instant's time of day in the company's zone (to the minute, as the reports show it);
/// with its offset in the hour the clocks go back, as [`local`].
pub(crate) fn local_time(tz: Tz, t: Option<NaiveDateTime>) -> Cell {
    t.map_or(Cell::Null, |t| {
        let zoned = t.and_utc().with_timezone(&tz);
        let json = instant::text_in(tz, &zoned);
        if is_ambiguous(zoned) {
            return Cell::typed(Cell::Text(wall_clock(zoned, "%H:%M")), json);
        }
        let local = zoned.time();
        Cell::typed(
            Cell::Time(local.with_second(0).and_then(|l| l.with_nanosecond(0)).unwrap_or(local)),
            json,
        )
    })
}

// Rows written as they come, for the reports too big to hold (the month sheet and payroll at
// 100,000 employees): CSV, a header and then a record per row; JSON, the contract's one object
// `{"rows":[...],"totals":...}` opened first and closed last. `Table::to_csv` and
// `Table::to_json` write through it too, so a streamed report is byte for byte a whole one.

enum Out<W: Write> {
    /// The CSV writer quotes a record into its own buffer, which then goes to `W`: a report
    /// that fails half way never has a buffered record flushed out behind its back.
    Csv(Vec<u8>, W),
    Json(W),
}

/// Rows to `W` as CSV or JSON, as they come.
pub(crate) struct RowWriter<W: Write> {
    out: Out<W>,
    /// The columns' JSON names.
    keys: Vec<String>,
    raw: bool,
    rows: u64,
}

impl<W: Write> RowWriter<W> {
    /// Begin a report of `columns` in `format` (CSV or JSON); `raw`: CSV without the formula guard.
    pub(crate) fn new(mut w: W, columns: &[String], format: Format, raw: bool) -> Result<RowWriter<W>> {
        let out = match format {
            Format::Csv => {
                let mut buf = Vec::new();
                csv_record(&mut buf, &mut w, columns.iter().map(String::as_str))?;
                Out::Csv(buf, w)
            }
            Format::Json => {
                w.write_all(b"{\"rows\":[")?;
                Out::Json(w)
            }
            other => bail!("a {other:?} report is not written row by row"),
        };
        Ok(RowWriter {
            out,
            keys: columns.iter().map(|c| json_key(c, columns)).collect(),
            raw,
            rows: 0,
        })
    }

    /// One row, as many cells as columns.
    pub(crate) fn row(&mut self, row: &[Cell]) -> Result<()> {
        match &mut self.out {
            Out::Csv(c, w) => csv_record(c, w, row.iter().map(|c| c.csv(self.raw)))?,
            Out::Json(w) => {
                if self.rows > 0 {
                    w.write_all(b",")?;
                }
                let object: Map<String, Value> = self.keys.iter().cloned().zip(row.iter().map(Cell::json)).collect();
                // Serialised first, so that a write's error stays an I/O error (a full disk).
                w.write_all(&serde_json::to_vec(&Value::Object(object))?)?;
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// End the report with its totals row, if it has one (first cell `total`): CSV's last
    /// record, JSON's `totals` object (no label, no empty cells); `null` without. Gives the
    /// writer back, flushed.
    pub(crate) fn finish(mut self, totals: Option<&[Cell]>) -> Result<W> {
        if let (Some(t), Out::Csv(..)) = (totals, &self.out) {
            self.row(t)?;
        }
        Ok(match self.out {
            Out::Csv(_, mut w) => {
                w.flush()?;
                w
            }
            Out::Json(mut w) => {
                let totals = totals.map_or(Value::Null, |r| {
                    let m: Map<String, Value> = self
                        .keys
                        .iter()
                        .zip(r)
                        .skip(1)
                        .filter(|(_, c)| **c != Cell::Null)
                        .map(|(k, c)| (totals_key(k.clone()), c.json()))
                        .collect();
                    Value::Object(m)
                });
                w.write_all(b"],\"totals\":")?;
                w.write_all(&serde_json::to_vec(&totals)?)?;
                w.write_all(b"}")?;
                w.flush()?;
                w
            }
        })
    }
}

/// One CSV record, quoted in `buf`, written to `w`.
fn csv_record<I, T>(buf: &mut Vec<u8>, w: &mut impl Write, record: I) -> Result<()>
where
    I: IntoIterator<Item = T>,
    T: AsRef<[u8]>,
{
    buf.clear();
    {
        let mut c = csv::WriterBuilder::new().buffer_capacity(1024).from_writer(&mut *buf);
        c.write_record(record)?;
        c.flush()?;
    }
    w.write_all(buf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_renderings_hold_the_same_cells() {
        let mut t = Table::new(&["dept", "absent", "note"]);
        t.push(vec![Cell::text("D1"), Cell::from(3u64), Cell::Null]);
        t.push(vec![Cell::text("D,2"), Cell::from(0u64), Cell::text("x")]);
        assert_eq!(t.to_csv(false).unwrap(), "dept,absent,note\nD1,3,\n\"D,2\",0,x\n");
        assert_eq!(
            t.to_json(),
            r#"{"rows":[{"absent":3,"dept":"D1","note":null},{"absent":0,"dept":"D,2","note":"x"}],"totals":null}"#
        );
        assert!(t.to_table().contains("D,2"));
    }

    #[test]
    fn a_sum_column_adds_the_named_counts_of_each_row() {
        let mut t = Table::new(&["dept", "headcount", "present", "late", "absent"]);
        t.push(vec![
            Cell::text("D1"),
            Cell::from(5u64),
            Cell::from(2u64),
            Cell::from(1u64),
            Cell::from(2u64),
        ]);
        t.push(vec![
            Cell::text("total"),
            Cell::from(5u64),
            Cell::from(2u64),
            Cell::from(1u64),
            Cell::from(2u64),
        ]);
        let s = t.with_sum("other", &["late", "absent", "no_such_column"]);
        assert_eq!(s.columns.last().map(String::as_str), Some("other"));
        assert!(s.rows.iter().all(|r| r.last() == Some(&Cell::Int(3))));
    }

    #[test]
    fn json_names_each_concept_once_and_keeps_the_totals_apart() {
        let mut t = Table::new(&["employee", "name", "date", "in since", "absent"]);
        let at = NaiveDateTime::parse_from_str("2026-12-01 07:04:05", "%Y-%m-%d %H:%M:%S").unwrap();
        let tz: Tz = "Europe/Paris".parse().unwrap();
        t.push(vec![
            Cell::text("E1"),
            Cell::text("Ann"),
            Cell::Date(at.date()),
            local_time(tz, Some(at)),
            Cell::from(3u64),
        ]);
        t.push(vec![
            Cell::text("total"),
            Cell::Null,
            Cell::Null,
            Cell::Null,
            Cell::from(3u64),
        ]);
        let v: Value = serde_json::from_str(&t.to_json()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "rows": [{"employee_id": "E1", "employee_name": "Ann", "work_date": "2026-12-01",
                          "in_since": "2026-12-01T08:04:05+01:00", "absent": 3}],
                "totals": {"absent": 3},
            })
        );
        assert_eq!(t.rows[0][3].plain(), "08:04", "people still read the local time");
        assert!(
            t.to_csv(false).unwrap().ends_with("total,,,,3\n"),
            "CSV keeps its totals line"
        );
    }

    #[test]
    fn a_narrow_table_keeps_the_named_columns_and_fits_its_width_a_row_to_a_line() {
        let mut t = Table::new(&["dept", "absent", "note"]);
        t.push(vec![Cell::text("D1"), Cell::from(3u64), Cell::text("x".repeat(200))]);
        let n = t.narrow(&[("dept", "department"), ("note", "note"), ("gone", "gone")]);
        assert_eq!(n.columns, ["department", "note"]);
        assert_eq!(n.rows[0][0], Cell::text("D1"));
        let text = n.to_table_within(80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.contains("department"));
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with('\u{2502}')).collect();
        assert_eq!(rows.len(), 2, "the header and the row, a line each: {text}");
        assert!(rows[1].contains("xxx\u{2026}"), "cut short, and says so: {text}");
    }

    #[test]
    fn text_is_inert_and_formulas_are_text_but_numbers_stay_numbers() {
        let mut t = Table::new(&["name", "late"]);
        t.push(vec![Cell::text("=HYPERLINK(\"http://x\",\"y\")"), Cell::Int(-2)]);
        t.push(vec![Cell::text("-2+3"), Cell::from(5u64)]);
        t.push(vec![Cell::text("a\u{1b}[2J"), Cell::Null]);
        assert_eq!(
            t.to_csv(false).unwrap(),
            "name,late\n\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-2\n'-2+3,5\na\\u{1b}[2J,\n"
        );
        assert_eq!(
            t.to_csv(true).unwrap(),
            "name,late\n\"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-2\n-2+3,5\na\\u{1b}[2J,\n"
        );
        assert!(!t.to_table().contains('\u{1b}'));
        assert!(t.to_table().contains("a\\u{1b}[2J"));
    }
}

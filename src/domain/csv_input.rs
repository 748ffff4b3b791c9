//! The CSV files people hand to `attendance` (roster, punches, calendar): one reader setup, one
//! header check and one set of bounds, so every file is read and refused the same way. Every
//! file is streamed: a line longer than [`MAX_LINE_BYTES`] or more rows than the file's limit
//! refuses the whole file at that point, so `/dev/zero` costs 64 KiB, not the machine's memory.

use std::io::Read;

use crate::error::Error;

/// A row that was refused, and why.
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct Refusal {
    pub line: u64,
    pub reason: String,
}

/// `--errors FILE`'s content: every refused row of a file as CSV (`line,reason`).
pub(crate) fn write_refusals(w: impl std::io::Write, refused: &[Refusal]) -> std::io::Result<()> {
    let mut csv = csv::Writer::from_writer(w);
    csv.write_record(["line", "reason"])?;
    for r in refused {
        csv.write_record([r.line.to_string().as_str(), r.reason.as_str()])?;
    }
    csv.flush()
}

/// The longest line a file may have (a roster row is about 100 bytes).
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

/// A reader that fails once a line passes [`MAX_LINE_BYTES`], naming the line.
#[derive(Debug)]
pub(crate) struct LineBound<R> {
    inner: R,
    line: u64,
    since_newline: usize,
}

impl<R: Read> Read for LineBound<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            if b == b'\n' {
                self.line += 1;
                self.since_newline = 0;
            } else {
                self.since_newline += 1;
                if self.since_newline > MAX_LINE_BYTES {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("line {} is longer than 64 KiB", self.line),
                    ));
                }
            }
        }
        Ok(n)
    }
}

/// Every record of the file, each as the csv crate gives it (a malformed row is that row's
/// refusal), or the whole file refused: a line past the bound, or more than `max_rows` rows.
pub(crate) fn records<'r, R: Read>(
    rdr: &'r mut csv::Reader<LineBound<R>>,
    what: &'static str,
    max_rows: u64,
) -> impl Iterator<Item = Result<Result<csv::StringRecord, csv::Error>, Error>> + 'r {
    let mut n = 0u64;
    rdr.records().map(move |rec| {
        n += 1;
        if n > max_rows {
            return Err(Error::input(format!(
                "{what}: more than {max_rows} rows: refused whole, nothing written (split the file)"
            )));
        }
        match rec {
            Err(e) if e.is_io_error() => Err(Error::input(format!("{what}: {e}: refused whole, nothing written"))),
            other => Ok(other),
        }
    })
}

/// One record as [`records`] yields it: the record and its line, or (a malformed row) its
/// refusal pushed onto `bad` and `None`.
pub(crate) fn record_or_refusal(
    rec: Result<csv::StringRecord, csv::Error>,
    bad: &mut Vec<Refusal>,
) -> Option<(csv::StringRecord, u64)> {
    match rec {
        Ok(r) => {
            let line = r.position().map_or(0, |p| p.line());
            Some((r, line))
        }
        Err(e) => {
            bad.push(Refusal {
                line: e.position().map_or(0, |p| p.line()),
                reason: e.to_string(),
            });
            None
        }
    }
}

/// A CSV reader over a bounded file.
pub(crate) type Reader<R> = csv::Reader<LineBound<R>>;

/// Open a CSV reader: a header line, fields trimmed, rows of varying length reported per row.
/// The header must be `required`, optionally followed by the first columns of `optional`.
pub(crate) fn open<R: Read>(
    reader: R,
    what: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<csv::Reader<LineBound<R>>, Error> {
    let (rdr, header) = reader_of(reader, what)?;
    let ok = header.len() >= required.len()
        && header.len() <= required.len() + optional.len()
        && header.iter().zip(required.iter().chain(optional)).all(|(h, e)| h == e);
    if !ok {
        let expected = if optional.is_empty() {
            required.join(",")
        } else {
            format!("{}[,{}]", required.join(","), optional.join(","))
        };
        return Err(Error::input(format!(
            "{what}: line 1: header must be '{expected}', found '{}'",
            header.join(",")
        )));
    }
    Ok(rdr)
}

/// [`open`] for a file whose optional columns may come in any order, each at most once, after
/// the required ones: also returns the position of each of `optional` (`None`: not in the file).
pub(crate) fn open_named<R: Read>(
    reader: R,
    what: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<(Reader<R>, Vec<Option<usize>>), Error> {
    let (rdr, header) = reader_of(reader, what)?;
    let extra = header.get(required.len()..).unwrap_or_default();
    let mut seen = std::collections::HashSet::new();
    let ok = header.len() >= required.len()
        && header.iter().zip(required).all(|(h, e)| h == e)
        && extra
            .iter()
            .all(|h| optional.contains(&h.as_str()) && seen.insert(h.as_str()));
    if !ok {
        return Err(Error::input(format!(
            "{what}: line 1: header must be '{}' then any of '{}' (each at most once), found '{}'",
            required.join(","),
            optional.join(","),
            header.join(",")
        )));
    }
    let at = optional.iter().map(|o| header.iter().position(|h| h == o)).collect();
    Ok((rdr, at))
}

/// The reader (a header line, fields trimmed, rows of varying length) and the header's fields.
fn reader_of<R: Read>(reader: R, what: &str) -> Result<(Reader<R>, Vec<String>), Error> {
    let bounded = LineBound {
        inner: reader,
        line: 1,
        since_newline: 0,
    };
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(bounded);
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| Error::input(format!("{what}: cannot read the header: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
    Ok((rdr, header))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_with_optional_columns() {
        assert!(open("a,b\n".as_bytes(), "x", &["a", "b"], &["c"]).is_ok());
        assert!(open("a,b,c\n".as_bytes(), "x", &["a", "b"], &["c"]).is_ok());
        let e = open("a,c\n".as_bytes(), "x", &["a", "b"], &["c"])
            .unwrap_err()
            .to_string();
        assert_eq!(e, "x: line 1: header must be 'a,b[,c]', found 'a,c'");
        assert!(open("a\n".as_bytes(), "x", &["a", "b"], &[]).is_err());
        assert!(open("a,b,c\n".as_bytes(), "x", &["a", "b"], &[]).is_err());
    }

    #[test]
    fn named_optional_columns_come_in_any_order_each_once() {
        let at = |h: &str| open_named(h.as_bytes(), "x", &["a"], &["b", "c"]).map(|(_, at)| at);
        assert_eq!(at("a\n").unwrap(), vec![None, None]);
        assert_eq!(at("a,c\n").unwrap(), vec![None, Some(1)]);
        assert_eq!(at("a,c,b\n").unwrap(), vec![Some(2), Some(1)]);
        for bad in ["a,c,c\n", "a,d\n", "b,a\n", "\n"] {
            assert!(at(bad).is_err(), "{bad}");
        }
    }
}

//! The CSV files people hand to `attendance` (roster, punches, calendar): one reader setup and
//! one header check, so every file is read and refused the same way.

use std::io::Read;

use crate::error::Error;

/// Open a CSV reader: a header line, fields trimmed, rows of varying length reported per row.
/// The header must be `required`, optionally followed by the first columns of `optional`.
pub(crate) fn open<R: Read>(
    reader: R,
    what: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<csv::Reader<R>, Error> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(reader);
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| Error::input(format!("{what}: cannot read the header: {e}")))?
        .iter()
        .map(str::to_string)
        .collect();
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
}

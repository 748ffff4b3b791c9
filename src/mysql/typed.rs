//! Reading MySQL rows into typed values. A value that does not fit its Rust type (a NULL
//! where none belongs, a status the code does not know) is an internal error naming the
//! column, never a silent default: a corrupt row must not read as `absent` or `0`.

use mysql::prelude::FromValue;
use mysql::Row;

use crate::error::Error;

/// A row being read column by column; `what` names it in errors ("attendance row").
pub(crate) struct Cols {
    row: Row,
    what: &'static str,
}

impl Cols {
    pub(crate) fn new(row: Row, what: &'static str) -> Cols {
        Cols { row, what }
    }

    fn column(&self, i: usize) -> String {
        self.row
            .columns_ref()
            .get(i)
            .map_or_else(|| format!("#{i}"), |c| c.name_str().into_owned())
    }

    /// Column `i` as a `T`, or an error naming the column and the value found.
    pub(crate) fn get<T: FromValue>(&mut self, i: usize) -> Result<T, Error> {
        match self.row.take_opt::<T, _>(i) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(Error::internal(format!(
                "{}: column {} holds {:?}, which does not read as {}",
                self.what,
                self.column(i),
                e.0,
                std::any::type_name::<T>()
            ))),
            None => Err(Error::internal(format!("{}: no column {}", self.what, self.column(i)))),
        }
    }

    /// Column `i` through `parse`, which names what it expected.
    pub(crate) fn parse<T>(&mut self, i: usize, parse: impl FnOnce(&str) -> Option<T>) -> Result<T, Error> {
        let text: String = self.get(i)?;
        parse(&text).ok_or_else(|| {
            Error::internal(format!(
                "{}: column {} holds '{text}', which the code does not know",
                self.what,
                self.column(i)
            ))
        })
    }
}

//! Voiding a punch on a live board (`punch void`): the token out of the employee's day, in one
//! script call on the department's board (`void.lua`).

use std::sync::LazyLock;

use anyhow::{Context, Result};
use chrono::NaiveDate;

use crate::domain::event::Kind;
use crate::redis::handle::Board;

static VOID: LazyLock<redis::Script> = LazyLock::new(|| redis::Script::new(include_str!("void.lua")));

impl Board {
    /// Take the punch `kind` at `secs` into `date` out of `emp`'s day on `dept`'s live board;
    /// `false` when the board holds no such punch (nothing written).
    pub(crate) fn void_punch(&mut self, dept: &str, date: NaiveDate, emp: &str, kind: Kind, secs: i64) -> Result<bool> {
        let tok = format!("{}{secs}", if kind == Kind::In { 'i' } else { 'o' });
        let mut inv = VOID.key(self.keys.board(dept, date));
        inv.arg(emp).arg(tok);
        let done: i64 = inv.invoke(&mut self.con).context("voiding the punch in Redis")?;
        Ok(done == 1)
    }
}

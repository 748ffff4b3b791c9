//! Audit rows (corrections, voids, review decisions): each names the MySQL account that wrote
//! it as the server's own `CURRENT_USER()`, which the command then reads back to show.

use anyhow::Result;
use mysql::prelude::Queryable;

/// Insert an audit row with `sql` (which writes `CURRENT_USER()` into `db_user`): the row's id
/// and the account the server wrote.
pub(crate) fn insert(
    tx: &mut mysql::Transaction,
    table: &'static str,
    sql: &str,
    params: impl Into<mysql::Params>,
) -> Result<(u64, String)> {
    tx.exec_drop(sql, params)?;
    let id = tx.last_insert_id().unwrap_or_default();
    Ok((id, db_user(tx, table, id)?))
}

/// The account row `id` of `table` says wrote it (empty when none is recorded).
pub(crate) fn db_user(tx: &mut impl Queryable, table: &'static str, id: u64) -> Result<String> {
    let found: Option<String> =
        tx.exec_first(format!("SELECT IFNULL(db_user, '') FROM {table} WHERE id = ?"), (id,))?;
    Ok(found.unwrap_or_default())
}

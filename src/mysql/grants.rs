//! The account a connection runs as and what `SHOW GRANTS` says it may do, for `doctor`.

use anyhow::Result;
use mysql::prelude::Queryable;

/// `CURRENT_USER()` (the account the server matched, `user@host`) and the lines of
/// `SHOW GRANTS` for it (with its enabled roles' on MariaDB).
pub(crate) fn show(conn: &mut impl Queryable) -> Result<(String, Vec<String>)> {
    let account: Option<String> = conn.query_first("SELECT CURRENT_USER()")?;
    let lines: Vec<String> = conn.query("SHOW GRANTS")?;
    Ok((account.unwrap_or_default(), lines))
}

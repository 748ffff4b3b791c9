//! MySQL's own bulk paths as references for settle: the rows settle wrote for a day, loaded
//! again into same-shaped tables with `LOAD DATA LOCAL INFILE` and with plain multi-row INSERTs.
//! Shared by the `bench` and `settle_bench` examples.

use std::io::Write;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use chrono::NaiveDate;
use mysql::prelude::Queryable;

/// A table shaped exactly like `attendance` (keys, foreign key and all), empty.
fn twin_table(conn: &mut mysql::PooledConn, name: &str) -> Result<()> {
    let (_, ddl): (String, String) = conn
        .query_first("SHOW CREATE TABLE attendance")?
        .context("no attendance table")?;
    conn.query_drop(format!("DROP TABLE IF EXISTS {name}"))?;
    conn.query_drop(
        ddl.replacen("CREATE TABLE `attendance`", &format!("CREATE TABLE `{name}`"), 1)
            .replace("`attendance_employee_fk`", &format!("`{name}_fk`")),
    )?;
    Ok(())
}

/// Seconds for (LOAD DATA, multi-row INSERT in batches of `batch`) of the rows settled for `date`.
pub fn references(db: &attendance::Db, date: NaiveDate, batch: usize) -> Result<(f64, f64)> {
    let mut conn = db.conn()?;
    let stored = settled_rows(&mut conn, date)?;
    let load_s = load_data(&mut conn, &stored)?;
    let insert_s = multi_insert(&mut conn, &stored, batch)?;
    conn.query_drop("DROP TABLE attendance_load")?;
    conn.query_drop("DROP TABLE attendance_insert")?;
    Ok((load_s, insert_s))
}

/// Seconds for LOAD DATA alone of the rows settled for `date` (a benchmark's later rounds).
#[allow(dead_code)] // the whole-day benchmark takes both references once
pub fn load_reference(db: &attendance::Db, date: NaiveDate) -> Result<f64> {
    let mut conn = db.conn()?;
    let stored = settled_rows(&mut conn, date)?;
    let load_s = load_data(&mut conn, &stored)?;
    conn.query_drop("DROP TABLE attendance_load")?;
    Ok(load_s)
}

/// The rows settle wrote for `date`, as stored, in primary-key order.
fn settled_rows(conn: &mut mysql::PooledConn, date: NaiveDate) -> Result<Vec<attendance::Stored>> {
    let rows: Vec<mysql::Row> = conn.exec(
        format!("{} WHERE work_date = ? ORDER BY employee_id", attendance::SELECT_STORED),
        (date,),
    )?;
    Ok(rows
        .into_iter()
        .map(attendance::stored_from_row)
        .collect::<Result<_, _>>()?)
}

/// The rows as LOAD DATA reads them: tab-separated, `\N` for NULL.
fn tsv_of(stored: &[attendance::Stored]) -> Result<Vec<u8>> {
    let mut tsv = Vec::with_capacity(stored.len() * 120);
    let dt =
        |t: Option<chrono::NaiveDateTime>| t.map_or("\\N".to_string(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string());
    for r in stored {
        writeln!(
            tsv,
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            r.work_date,
            r.employee_id,
            r.department_id,
            r.status,
            dt(r.first_in),
            dt(r.last_out),
            r.late_minutes,
            r.early_minutes,
            r.punches,
            u8::from(r.corrected)
        )?;
    }

    Ok(tsv)
}

/// Seconds for `load` (a LOAD DATA LOCAL INFILE statement) fed `tsv`.
fn timed_load(conn: &mut mysql::PooledConn, tsv: Vec<u8>, load: &str) -> Result<f64> {
    let feed = std::sync::Arc::new(tsv);
    conn.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(move |_, w| {
        w.write_all(&feed)?;
        Ok(())
    })));
    let t = Instant::now();
    conn.query_drop(load)?;
    Ok(t.elapsed().as_secs_f64())
}

/// LOAD DATA LOCAL INFILE of the rows into a twin table; its seconds.
fn load_data(conn: &mut mysql::PooledConn, stored: &[attendance::Stored]) -> Result<f64> {
    let tsv = tsv_of(stored)?;
    twin_table(conn, "attendance_load")?;
    let load_s = timed_load(
        conn,
        tsv,
        "LOAD DATA LOCAL INFILE 'rows.tsv' INTO TABLE attendance_load (work_date, employee_id, department_id, \
         status, first_in, last_out, late_minutes, early_minutes, punches, corrected)",
    )?;
    let loaded: u64 = conn.query_first("SELECT COUNT(*) FROM attendance_load")?.unwrap_or(0);
    if loaded != stored.len() as u64 {
        bail!("LOAD DATA loaded {loaded} rows of {}", stored.len());
    }

    Ok(load_s)
}

/// Multi-row INSERTs of `batch` rows per transaction into a twin table; its seconds.
fn multi_insert(conn: &mut mysql::PooledConn, stored: &[attendance::Stored], batch: usize) -> Result<f64> {
    twin_table(conn, "attendance_insert")?;
    let t = Instant::now();
    for chunk in stored.chunks(batch) {
        let mut tx = conn.start_transaction(mysql::TxOpts::default())?;
        let params: Vec<mysql::Value> = chunk
            .iter()
            .flat_map(|r| {
                [
                    r.work_date.into(),
                    r.employee_id.clone().into(),
                    r.department_id.clone().into(),
                    r.status.as_str().into(),
                    r.first_in.into(),
                    r.last_out.into(),
                    r.late_minutes.into(),
                    r.early_minutes.into(),
                    r.punches.clone().into(),
                    r.corrected.into(),
                ]
            })
            .collect::<Vec<mysql::Value>>();
        tx.exec_drop(
            format!(
                "INSERT INTO attendance_insert (work_date, employee_id, department_id, status, first_in, last_out, \
                 late_minutes, early_minutes, punches, corrected) VALUES {}",
                attendance::placeholders(chunk.len(), 10)
            ),
            params,
        )?;
        tx.commit()?;
    }
    let insert_s = t.elapsed().as_secs_f64();

    Ok(insert_s)
}

/// Seconds for LOAD DATA of the punch log rows settle wrote for `date`, into a twin of
/// `punch_log`: settle writes them too, so its reference loads them beside the day's rows.
pub fn punch_log_reference(db: &attendance::Db, date: NaiveDate) -> Result<(f64, usize)> {
    let mut conn = db.conn()?;
    let rows: Vec<mysql::Row> = conn.exec(
        "SELECT event_id, CAST(work_date AS CHAR), employee_id, department_id, CAST(punched_at AS CHAR), \
         CAST(kind AS CHAR), source, key_id, CAST(recorded_at AS CHAR), CAST(how AS CHAR) FROM punch_log \
         WHERE work_date = ?",
        (date,),
    )?;
    let mut tsv = Vec::with_capacity(rows.len() * 160);
    for r in &rows {
        let cells: Vec<String> = (0..10)
            .map(|i| match r.as_ref(i) {
                Some(mysql::Value::NULL) | None => "\\N".to_string(),
                Some(v) => mysql::from_value::<String>(v.clone()),
            })
            .collect();
        writeln!(tsv, "{}", cells.join("\t"))?;
    }
    let (_, ddl): (String, String) = conn
        .query_first("SHOW CREATE TABLE punch_log")?
        .context("no punch_log table")?;
    conn.query_drop("DROP TABLE IF EXISTS punch_log_load")?;
    conn.query_drop(ddl.replacen("CREATE TABLE `punch_log`", "CREATE TABLE `punch_log_load`", 1))?;
    let load_s = timed_load(
        &mut conn,
        tsv,
        "LOAD DATA LOCAL INFILE 'punch_log.tsv' INTO TABLE punch_log_load (event_id, work_date, employee_id, \
         department_id, punched_at, kind, source, key_id, recorded_at, how)",
    )?;
    let loaded: u64 = conn.query_first("SELECT COUNT(*) FROM punch_log_load")?.unwrap_or(0);
    conn.query_drop("DROP TABLE punch_log_load")?;
    if loaded != rows.len() as u64 {
        bail!("LOAD DATA loaded {loaded} punch log rows of {}", rows.len());
    }
    Ok((load_s, rows.len()))
}

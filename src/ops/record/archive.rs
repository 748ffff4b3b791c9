//! Archiving old days: the attendance rows, their corrections, the punch log, the held punches and the settle
//! runs of the days before a date go to CSV files (one per table), and with `drop` leave MySQL in the same
//! transaction that read them. Files first, synced and renamed into place before the commit
//! (`crate::files`, each under `<file>.partial` until then): a crash at any point leaves
//! either the rows in MySQL or the files on disk, never neither.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::NaiveDate;
use serde::Serialize;

use crate::config::Config;
use crate::error::Error;
use crate::files::NewFile;
use crate::mysql::archive_rows::TABLES;
use crate::mysql::Tx;

/// What `archive` is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub before: NaiveDate,
    /// Today in the company's zone: `before` may not be later.
    pub today: NaiveDate,
    pub dir: PathBuf,
    pub drop: bool,
    /// Count what would be written and deleted; write, delete and lock nothing.
    pub dry_run: bool,
}

/// One file written.
#[derive(Debug, Serialize)]
pub(crate) struct FileReport {
    pub table: &'static str,
    pub path: PathBuf,
    pub rows: u64,
}

/// What a run did.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    pub before: NaiveDate,
    pub files: Vec<FileReport>,
    pub dropped: bool,
    /// Nothing was done: `files` are what a run would write, `would_drop` whether it would delete.
    pub dry_run: bool,
    pub would_drop: bool,
    /// Partitions of `attendance` dropped once empty (a partitioned table only).
    pub partitions_dropped: Vec<String>,
    /// Why emptied partitions were kept, when dropping them failed (the archive stands).
    pub partitions_problem: Option<String>,
}

/// The file of one table: `attendance-before-2026-01-01.csv`.
pub(crate) fn file_name(table: &str, before: NaiveDate) -> String {
    format!("{table}-before-{before}.csv")
}

/// Refuse what would change nothing sensible or overwrite an earlier archive, before any
/// store is touched.
fn check(opts: &Options) -> Result<Vec<PathBuf>> {
    if opts.before > opts.today {
        return Err(Error::input(format!(
            "--before {} is in the future (today is {}): only past days can be archived",
            opts.before, opts.today
        ))
        .into());
    }
    let dir = &opts.dir;
    if !dir.is_dir() {
        return Err(Error::input(format!("--out {}: no such directory", dir.display())).into());
    }
    // A dry run writes nothing, not even a probe: a real run finds out then.
    if !opts.dry_run {
        let probe = dir.join(format!(".attendance-archive-probe-{}", std::process::id()));
        File::create(&probe)
            .and_then(|_| fs::remove_file(&probe))
            .map_err(|e| Error::input(format!("--out {}: cannot write there: {e}", dir.display())))?;
    }
    let paths: Vec<PathBuf> = TABLES
        .iter()
        .map(|(t, _)| dir.join(file_name(t, opts.before)))
        .collect();
    if let Some(p) = paths.iter().find(|p| p.exists()) {
        return Err(Error::input(format!(
            "{} already exists: move it away (an archive is never overwritten)",
            p.display()
        ))
        .into());
    }
    Ok(paths)
}

fn partial(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".partial");
    PathBuf::from(p)
}

/// The files already renamed into place by a run that then failed (their `.partial` files
/// go when their `NewFile` drops).
fn remove_all(paths: &[PathBuf]) {
    for p in paths {
        fs::remove_file(p).ok();
    }
}

pub(crate) fn archive(cfg: &Config, opts: &Options) -> Result<Report> {
    let paths = check(opts)?;
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    if opts.dry_run {
        return dry_run(&mut conn, opts, paths);
    }
    let mut tx = crate::mysql::archive_rows::begin(&mut conn, opts.drop)?;
    // Before the commit: settle's record of the settled days (in Redis) must forget those whose
    // rows leave, or the next settle would take them for days a fail-over lost. Redis away:
    // nothing is dropped.
    let forgotten = match opts.drop {
        true => crate::redis::Board::open(cfg).and_then(|mut b| b.forget_settled_days_before(opts.before)),
        false => Ok(()),
    };
    let files = match forgotten.and_then(|()| files_then_delete(&mut tx, opts, &paths)) {
        Ok(files) => files,
        Err(e) => {
            tx.rollback().ok();
            remove_all(&paths);
            return Err(e);
        }
    };
    tx.commit()
        .context("committing the archive (the files are written; the rows may still be in MySQL)")?;
    // The archive is done: emptied partitions are only space to give back, and a failure to
    // drop them (an account without LOCK TABLES or DROP, say) is reported, not an error.
    let (partitions_dropped, partitions_problem) = match opts.drop {
        false => (Vec::new(), None),
        true => match crate::mysql::partitions::drop_empty_before(&mut conn, opts.before) {
            Ok(dropped) => (dropped, None),
            Err(e) => (Vec::new(), Some(crate::ops::exit::one_line(&e))),
        },
    };
    Ok(Report {
        before: opts.before,
        files,
        dropped: opts.drop,
        dry_run: false,
        would_drop: opts.drop,
        partitions_dropped,
        partitions_problem,
    })
}

/// The rows each file would hold, counted in a read-only snapshot (what `--drop` would delete).
fn dry_run(conn: &mut crate::mysql::Conn, opts: &Options, paths: Vec<PathBuf>) -> Result<Report> {
    let mut tx = crate::mysql::archive_rows::begin(conn, false)?;
    let mut files = Vec::new();
    for ((table, query), path) in TABLES.iter().zip(paths) {
        let rows = crate::mysql::archive_rows::count(&mut tx, query, opts.before)?;
        files.push(FileReport { table, path, rows });
    }
    tx.rollback()?;
    Ok(Report {
        before: opts.before,
        files,
        dropped: false,
        dry_run: true,
        would_drop: opts.drop,
        partitions_dropped: Vec::new(),
        partitions_problem: None,
    })
}

/// Everything before the commit: the files, the deletes (checked against the files), and the
/// files renamed into place. The files take their names before the commit: after a crash in
/// between, the rows are still in MySQL and the files say so by being there (a rerun refuses
/// to overwrite them).
fn files_then_delete(tx: &mut Tx<'_>, opts: &Options, paths: &[PathBuf]) -> Result<Vec<FileReport>> {
    let (files, written) = write_files(tx, opts, paths)?;
    if opts.drop {
        // The rows were locked when read: anything else means the files miss something.
        for (table, n) in crate::mysql::archive_rows::delete(tx, opts.before)? {
            let written = files.iter().find(|f| f.table == table).map_or(0, |f| f.rows);
            if written != n {
                return Err(Error::refused(format!(
                    "{table}: {written} rows written but {n} to delete; nothing deleted"
                ))
                .into());
            }
        }
    }
    // Each file synced, renamed into place and its directory synced.
    for (f, p) in written.into_iter().zip(paths) {
        f.commit().with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(files)
}

/// Each table to its `.partial` file, not yet in place.
fn write_files(tx: &mut Tx<'_>, opts: &Options, paths: &[PathBuf]) -> Result<(Vec<FileReport>, Vec<NewFile>)> {
    let mut files = Vec::new();
    let mut written = Vec::new();
    for ((table, query), path) in TABLES.iter().zip(paths) {
        let tmp = partial(path);
        // Attendance is personal data: readable by the archiving account only.
        let mut file =
            NewFile::private_at(path, tmp.clone()).map_err(|e| Error::input(format!("{}: {e}", tmp.display())))?;
        let mut w = csv::Writer::from_writer(&mut file);
        let rows = crate::mysql::archive_rows::export(tx, query, opts.before, opts.drop, |r| {
            w.write_record(r)?;
            Ok(())
        })?;
        w.into_inner()
            .map_err(|e| anyhow::anyhow!("{}: {}", tmp.display(), e.error()))?;
        files.push(FileReport {
            table,
            path: path.clone(),
            rows,
        });
        written.push(file);
    }
    Ok((files, written))
}

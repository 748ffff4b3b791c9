//! Monthly partitions of `attendance` (RANGE COLUMNS on work_date): reading them, planning
//! the DDL that adds months, and running it. A partition is named after its bound:
//! `p20260201` holds the days before 2026-02-01 (January; the first one also everything
//! earlier), `pmax` every day after the last bound, so that no insert ever fails for want of
//! a partition.

use anyhow::Result;
use chrono::{Months, NaiveDate};
use mysql::prelude::Queryable;
use serde::Serialize;

use crate::error::Error;

/// One partition as MariaDB reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Partition {
    pub name: String,
    /// `VALUES LESS THAN`; `None` = MAXVALUE.
    pub less_than: Option<NaiveDate>,
    /// InnoDB's estimate (information_schema), not a count.
    pub rows: u64,
}

/// The partitions of `attendance`, in order; empty when the table is not partitioned.
pub(crate) fn list(conn: &mut impl Queryable) -> Result<Vec<Partition>> {
    let rows: Vec<(String, Option<String>, Option<u64>)> = conn.query(
        "SELECT PARTITION_NAME, PARTITION_DESCRIPTION, TABLE_ROWS FROM information_schema.PARTITIONS \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'attendance' AND PARTITION_NAME IS NOT NULL \
         ORDER BY PARTITION_ORDINAL_POSITION",
    )?;
    rows.into_iter()
        .map(|(name, desc, n)| {
            let desc = desc.unwrap_or_default();
            let less_than = match desc.as_str() {
                "MAXVALUE" => None,
                d => Some(
                    NaiveDate::parse_from_str(d.trim_matches('\''), "%Y-%m-%d").map_err(|_| {
                        Error::refused(format!(
                            "attendance is partitioned in a way this command does not manage (partition {name}: {d})"
                        ))
                    })?,
                ),
            };
            Ok(Partition {
                name,
                less_than,
                rows: n.unwrap_or_default(),
            })
        })
        .collect()
}

/// The name of the partition with this bound.
pub(crate) fn name_of(less_than: Option<NaiveDate>) -> String {
    match less_than {
        Some(d) => format!("p{}", d.format("%Y%m%d")),
        None => "pmax".into(),
    }
}

fn definition(less_than: Option<NaiveDate>) -> String {
    match less_than {
        Some(d) => format!("PARTITION {} VALUES LESS THAN ('{d}')", name_of(Some(d))),
        None => "PARTITION pmax VALUES LESS THAN (MAXVALUE)".into(),
    }
}

/// The bounds that give each of `months` months from `from` (a first day) a partition.
pub(crate) fn month_bounds(from: NaiveDate, months: u32) -> Vec<NaiveDate> {
    (0..=months)
        .filter_map(|i| from.checked_add_months(Months::new(i)))
        .collect()
}

/// The statements that give `attendance` every bound in `bounds`. A table not yet
/// partitioned is partitioned in one statement (a copy of the table); on a partitioned one
/// only the partitions a new bound falls into are split (REORGANIZE), which is instant for
/// the empty `pmax` of future months. Bounds already there: nothing to do.
pub(crate) fn plan(existing: &[Partition], bounds: &[NaiveDate]) -> Vec<String> {
    if existing.is_empty() {
        let mut parts: Vec<String> = bounds.iter().map(|b| definition(Some(*b))).collect();
        parts.push(definition(None));
        return vec![format!(
            "ALTER TABLE attendance PARTITION BY RANGE COLUMNS(work_date) ({})",
            parts.join(", ")
        )];
    }
    let mut statements = Vec::new();
    for (i, p) in existing.iter().enumerate() {
        let lower = i.checked_sub(1).and_then(|j| existing[j].less_than);
        let mut inside: Vec<NaiveDate> = bounds
            .iter()
            .copied()
            .filter(|b| lower.is_none_or(|l| *b > l) && p.less_than.is_none_or(|u| *b < u))
            .collect();
        if inside.is_empty() {
            continue;
        }
        inside.sort_unstable();
        inside.dedup();
        let mut parts: Vec<String> = inside.into_iter().map(|b| definition(Some(b))).collect();
        parts.push(match p.less_than {
            Some(d) => format!("PARTITION {} VALUES LESS THAN ('{d}')", p.name),
            None => format!("PARTITION {} VALUES LESS THAN (MAXVALUE)", p.name),
        });
        statements.push(format!(
            "ALTER TABLE attendance REORGANIZE PARTITION {} INTO ({})",
            p.name,
            parts.join(", ")
        ));
    }
    statements
}

/// The foreign keys from or to `attendance`: MariaDB partitions no table that has one.
fn foreign_keys(conn: &mut impl Queryable) -> Result<Vec<String>> {
    Ok(conn.query(
        "SELECT CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS \
         WHERE CONSTRAINT_SCHEMA = DATABASE() AND (TABLE_NAME = 'attendance' OR REFERENCED_TABLE_NAME = 'attendance') \
         ORDER BY 1",
    )?)
}

/// Give `attendance` a partition for each of `months` months from `from`; returns the
/// partitions after. A foreign key still tying the table (migration V5 not applied, or one
/// added by hand) is a refusal that names it, before any DDL.
pub(crate) fn partition(conn: &mut impl Queryable, from: NaiveDate, months: u32) -> Result<Vec<Partition>> {
    let fks = foreign_keys(conn)?;
    if !fks.is_empty() {
        return Err(Error::refused(format!(
            "attendance cannot be partitioned while foreign keys tie it ({}): run `attendance migrate` (V5 drops them)",
            fks.join(", ")
        ))
        .into());
    }
    let bounds = month_bounds(from, months);
    for sql in plan(&list(conn)?, &bounds) {
        conn.query_drop(&sql)?;
    }
    list(conn)
}

/// Drop the partitions that hold only days before `before`, once they are empty (after an
/// archive deleted their rows). The table is write-locked meanwhile, so no row can land in
/// a partition between the check and the drop; a partition that is not empty is kept.
/// Returns the dropped names.
pub(crate) fn drop_empty_before(conn: &mut impl Queryable, before: NaiveDate) -> Result<Vec<String>> {
    let parts = list(conn)?;
    let candidates: Vec<&Partition> = parts
        .iter()
        .filter(|p| p.less_than.is_some_and(|d| d <= before))
        .collect();
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    conn.query_drop("LOCK TABLES attendance WRITE")?;
    let dropped = (|| -> Result<Vec<String>> {
        let mut empty = Vec::new();
        for p in candidates {
            let any: Option<u8> =
                conn.query_first(format!("SELECT 1 FROM attendance PARTITION ({}) LIMIT 1", p.name))?;
            if any.is_none() {
                empty.push(p.name.clone());
            }
        }
        if !empty.is_empty() {
            conn.query_drop(format!("ALTER TABLE attendance DROP PARTITION {}", empty.join(", ")))?;
        }
        Ok(empty)
    })();
    conn.query_drop("UNLOCK TABLES")?;
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn part(less_than: Option<&str>) -> Partition {
        let less_than = less_than.map(d);
        Partition {
            name: name_of(less_than),
            less_than,
            rows: 0,
        }
    }

    #[test]
    fn a_plain_table_is_partitioned_in_one_statement() {
        let sql = plan(&[], &month_bounds(d("2026-01-01"), 2));
        assert_eq!(
            sql,
            ["ALTER TABLE attendance PARTITION BY RANGE COLUMNS(work_date) (\
              PARTITION p20260101 VALUES LESS THAN ('2026-01-01'), \
              PARTITION p20260201 VALUES LESS THAN ('2026-02-01'), \
              PARTITION p20260301 VALUES LESS THAN ('2026-03-01'), \
              PARTITION pmax VALUES LESS THAN (MAXVALUE))"]
        );
    }

    #[test]
    fn new_months_split_only_the_partitions_they_fall_into() {
        let existing = [part(Some("2026-01-01")), part(Some("2026-02-01")), part(None)];
        assert!(plan(&existing, &month_bounds(d("2026-01-01"), 1)).is_empty());
        let sql = plan(&existing, &month_bounds(d("2025-12-01"), 3));
        assert_eq!(
            sql,
            [
                "ALTER TABLE attendance REORGANIZE PARTITION p20260101 INTO (\
                 PARTITION p20251201 VALUES LESS THAN ('2025-12-01'), \
                 PARTITION p20260101 VALUES LESS THAN ('2026-01-01'))",
                "ALTER TABLE attendance REORGANIZE PARTITION pmax INTO (\
                 PARTITION p20260301 VALUES LESS THAN ('2026-03-01'), \
                 PARTITION pmax VALUES LESS THAN (MAXVALUE))",
            ]
        );
    }
}

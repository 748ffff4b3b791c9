//! A realistic day of punches for demos and benchmarks: most people arrive between 08:00 and
//! 09:00, some late, a few never come; most leave after 18:00, some early. Deterministic for a
//! seed, and a person absent in the morning stays absent in the evening.

use std::io::Write;

use chrono::{Duration, NaiveDate, NaiveTime};
use chrono_tz::Tz;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::domain::day::policy::{day_start, local_offset_secs};

/// Which half of the day is sampled: the check-ins or the check-outs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Morning,
    Evening,
}

/// Shares of the day, in percent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mix {
    pub absent_pct: f64,
    pub late_pct: f64,
    pub early_pct: f64,
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            absent_pct: 3.0,
            late_pct: 8.0,
            early_pct: 5.0,
        }
    }
}

/// Write `employee_id,kind,at,source` rows for `ids` on `date` in `tz`; returns the row count.
pub(crate) fn write_punches(
    mut w: impl Write,
    ids: &[String],
    date: NaiveDate,
    tz: Tz,
    phase: Phase,
    mix: Mix,
    seed: u64,
) -> std::io::Result<usize> {
    let start = day_start(tz, date);
    let at = |h: u32, m: u32| local_offset_secs(tz, date, NaiveTime::from_hms_opt(h, m, 0).expect("valid"));
    let (eight, nine, ten_thirty) = (at(8, 0), at(9, 0), at(10, 30));
    let (sixteen, eighteen, twenty) = (at(16, 0), at(18, 0), at(20, 0));
    // In time order, as kiosks would send them: a supervisor's queue then reads as the day went.
    let mut rows: Vec<(i64, String)> = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        // One generator per person, so the evening knows who was absent in the morning.
        let mut rng = StdRng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        if rng.random_range(0.0..100.0) < mix.absent_pct {
            continue;
        }
        let late = rng.random_range(0.0..100.0) < mix.late_pct;
        let early = rng.random_range(0.0..100.0) < mix.early_pct;
        let kiosk = rng.random_range(1..=8);
        let (kind, secs) = match phase {
            Phase::Morning if late => ("in", rng.random_range(nine + 60..ten_thirty)),
            Phase::Morning => ("in", rng.random_range(eight..nine)),
            Phase::Evening if early => ("out", rng.random_range(sixteen..eighteen)),
            Phase::Evening => ("out", rng.random_range(eighteen..twenty)),
        };
        let t = (start + Duration::seconds(secs)).with_timezone(&tz);
        rows.push((
            secs,
            format!(
                "{id},{kind},{},kiosk-{kiosk}",
                t.to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
            ),
        ));
    }
    rows.sort();
    writeln!(w, "employee_id,kind,at,source")?;
    for (_, row) in &rows {
        writeln!(w, "{row}")?;
    }
    w.flush()?;
    Ok(rows.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mornings_and_evenings_agree_on_who_came() {
        let ids: Vec<String> = (0..2000).map(|i| format!("E{i}")).collect();
        let d = NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
        let (mut m, mut e) = (Vec::new(), Vec::new());
        let nm = write_punches(
            &mut m,
            &ids,
            d,
            chrono_tz::Europe::Paris,
            Phase::Morning,
            Mix::default(),
            1,
        )
        .unwrap();
        let ne = write_punches(
            &mut e,
            &ids,
            d,
            chrono_tz::Europe::Paris,
            Phase::Evening,
            Mix::default(),
            1,
        )
        .unwrap();
        assert_eq!(nm, ne);
        assert!(nm > 1900 && nm < 2000, "about 3% absent: {nm}");
        let who = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .lines()
                .skip(1)
                .map(|l| l.split(',').next().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let sorted = |mut v: Vec<String>| {
            v.sort();
            v
        };
        assert_eq!(sorted(who(&m)), sorted(who(&e)));
        // Each phase in time order.
        let times = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .lines()
                .skip(1)
                .map(|l| chrono::DateTime::parse_from_rfc3339(l.split(',').nth(2).unwrap()).unwrap())
                .collect::<Vec<_>>()
        };
        for t in [times(&m), times(&e)] {
            assert!(t.windows(2).all(|p| p[0] <= p[1]));
        }
    }
}

//! What the harness knows of its company, kept by itself as the month goes: the roster with
//! employment dates, the calendar's holidays, leave, corrections, and every punch the product
//! acknowledged (exit 0 of a check-in, or an approved review). The oracle judges from this alone.

use std::collections::{BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::Tz;

/// The company's zone: Paris has a DST change a year, which a soak run across late October or
/// late March meets.
pub const TZ: &str = "Europe/Paris";

pub fn tz() -> Tz {
    TZ.parse().unwrap()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    In,
    Out,
}

impl Kind {
    pub fn word(self) -> &'static str {
        match self {
            Kind::In => "in",
            Kind::Out => "out",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Emp {
    pub id: String,
    pub dept: String,
    pub role: &'static str,
    /// On the night shift (22:00-06:00, every day) rather than the policy's 09:00-18:00, Mon-Fri.
    pub night: bool,
    pub start: Option<NaiveDate>,
    pub end: Option<NaiveDate>,
}

impl Emp {
    pub fn employed(&self, d: NaiveDate) -> bool {
        self.start.is_none_or(|s| s <= d) && self.end.is_none_or(|e| d <= e)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Punch {
    pub emp: String,
    pub at: DateTime<Utc>,
    pub kind: Kind,
}

#[derive(Default)]
pub struct World {
    pub emps: Vec<Emp>,
    pub acked: Vec<Punch>,
    /// Punches held for review and rejected: they must land nowhere.
    pub rejected: Vec<Punch>,
    /// Acknowledged punches voided before settle (`punch void`): in the punch log twice (as
    /// they came, and `voided`), in the journal once, in no settled row.
    pub voided: Vec<Punch>,
    pub holidays: HashSet<NaiveDate>,
    pub leave: HashSet<(String, NaiveDate)>,
    /// Half a day of leave added before the day: (employee, day) -> the morning off (`true`)
    /// or the afternoon.
    pub half_leave: HashMap<(String, NaiveDate), bool>,
    /// A correction of a settled day's check-out: (employee, day) -> the new check-out.
    pub corrections: HashMap<(String, NaiveDate), DateTime<Utc>>,
    pub settled: BTreeSet<NaiveDate>,
    /// Board fields written with a raw HSET: (employee, day). No signed punch stands behind them.
    pub forged: Vec<(String, NaiveDate)>,
}

impl World {
    pub fn emp(&self, id: &str) -> &Emp {
        self.emps.iter().find(|e| e.id == id).unwrap()
    }

    /// Whether `d` is a work day of `e`'s shift: a calendar holiday is nobody's.
    pub fn workday(&self, e: &Emp, d: NaiveDate) -> bool {
        !self.holidays.contains(&d) && (e.night || !matches!(d.weekday(), Weekday::Sat | Weekday::Sun))
    }

    /// The day a punch counts for: a night worker's punch before 10:00 (up to four hours after
    /// the night's end) belongs to the night that began the evening before.
    pub fn work_date(&self, p: &Punch) -> NaiveDate {
        let local = p.at.with_timezone(&tz());
        if self.emp(&p.emp).night && local.time() < NaiveTime::from_hms_opt(10, 0, 0).unwrap() {
            local.date_naive().pred_opt().unwrap()
        } else {
            local.date_naive()
        }
    }
}

/// `d` at `hh:mm:ss` in the company's zone.
pub fn local(d: NaiveDate, hh: u32, mm: u32, ss: u32) -> DateTime<Utc> {
    tz().from_local_datetime(&d.and_hms_opt(hh, mm, ss).unwrap())
        .earliest()
        .unwrap()
        .with_timezone(&Utc)
}

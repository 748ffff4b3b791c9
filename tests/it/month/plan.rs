//! A day's intentions, drawn from the seeded generator: who comes, when, through which channel
//! (a kiosk's bulk file, a single check-in, the offline kiosk, the front desk), who is away on
//! leave known in advance, who simply does not come.

use chrono::NaiveDate;
use rand::rngs::StdRng;
use rand::RngExt;

use super::model::{local, Kind, Punch, World};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A row of one of the day's kiosk files (`checkin --file`); `labelled: false` leaves the
    /// kind empty, for the punch's time to decide.
    Bulk { labelled: bool },
    /// `checkin E --at T`, with `--kind` when labelled.
    Single { labelled: bool },
    /// Taken by the kiosk that is offline; replayed from its file when it is back.
    Kiosk,
    /// Typed in at the front desk, whose key may not replay: held for review, then approved or
    /// rejected.
    Desk { approve: bool },
}

#[derive(Clone, Debug)]
pub struct Planned {
    pub punch: Punch,
    pub channel: Channel,
}

#[derive(Default)]
pub struct DayPlan {
    pub punches: Vec<Planned>,
    /// Employees expected that day who will not punch (candidates for leave added late).
    pub absent: Vec<String>,
    /// Leave added before the day.
    pub leave_ahead: Vec<String>,
    /// Half a day of leave added before the day (the morning off: `true`); they come for the
    /// other half, around its edge (13:30, the middle of 09:00-18:00).
    pub half_ahead: Vec<(String, bool)>,
}

/// What shapes the plan beyond the model: the offline kiosk's department on this day, if it is
/// offline, and the front desk's employee (kept off the day's other channels).
pub struct Shape<'a> {
    pub offline_dept: Option<&'a str>,
    pub hr: &'a str,
}

/// A time of day `lo..=hi` seconds after midnight, with the rule's edges drawn often: `edges`
/// are the instants a rule turns on (09:00:00 is on time, 09:00:01 one minute late).
fn time_in(rng: &mut StdRng, lo: u32, hi: u32, edges: &[u32]) -> u32 {
    if rng.random_bool(0.12) {
        edges[rng.random_range(0..edges.len())]
    } else {
        rng.random_range(lo..=hi)
    }
}

fn hms(s: u32) -> (u32, u32, u32) {
    (s / 3600, s / 60 % 60, s % 60)
}

pub fn plan(w: &World, d: NaiveDate, rng: &mut StdRng, shape: &Shape) -> DayPlan {
    let mut p = DayPlan::default();
    let next = d.succ_opt().unwrap();
    let mut desk_taken = false;
    for e in w.emps.iter().filter(|e| e.employed(d) && w.workday(e, d)) {
        if rng.random_bool(0.02) {
            p.leave_ahead.push(e.id.clone());
            continue;
        }
        if rng.random_bool(0.05) {
            p.absent.push(e.id.clone());
            continue;
        }
        let (with_in, with_out) = match rng.random_range(0..100) {
            0..3 => (true, false),
            3..5 => (false, true),
            _ => (true, true),
        };
        let at = |s: u32, day: NaiveDate| {
            let (h, m, sec) = hms(s);
            local(day, h, m, sec)
        };
        // A day worker off for half the day, now and then: in around 13:30 after a morning off,
        // out around it before an afternoon off.
        let half = (!e.night && rng.random_bool(0.03)).then(|| rng.random_bool(0.5));
        if let Some(morning) = half {
            p.half_ahead.push((e.id.clone(), morning));
        }
        let (in_at, out_at) = if e.night {
            let i = time_in(rng, 21 * 3600 + 40 * 60, 22 * 3600 + 25 * 60, &[79_800, 79_801, 79_200]);
            let o = time_in(rng, 5 * 3600 + 45 * 60, 6 * 3600 + 30 * 60, &[21_300, 21_299, 21_600]);
            (at(i, d), at(o, next))
        } else {
            let (i, o) = match half {
                Some(true) => (
                    time_in(rng, 12 * 3600 + 50 * 60, 13 * 3600 + 50 * 60, &[48_600, 48_601, 48_599]),
                    time_in(rng, 17 * 3600 + 30 * 60, 19 * 3600, &[64_800, 64_799, 64_801]),
                ),
                Some(false) => (
                    time_in(rng, 7 * 3600 + 45 * 60, 9 * 3600 + 25 * 60, &[32_400, 32_401, 32_399]),
                    time_in(rng, 13 * 3600 + 10 * 60, 14 * 3600, &[48_600, 48_599, 48_601]),
                ),
                None => (
                    time_in(rng, 7 * 3600 + 45 * 60, 9 * 3600 + 25 * 60, &[32_400, 32_401, 32_399]),
                    time_in(rng, 17 * 3600 + 30 * 60, 19 * 3600, &[64_800, 64_799, 64_801]),
                ),
            };
            (at(i, d), at(o, d))
        };
        let offline = shape.offline_dept == Some(e.dept.as_str());
        let desk = !offline && !e.night && e.id != shape.hr && with_in && !desk_taken && rng.random_bool(0.15);
        desk_taken |= desk;
        let channel = |kind: Kind, rng: &mut StdRng| {
            if offline {
                Channel::Kiosk
            } else if desk && kind == Kind::In {
                Channel::Desk {
                    approve: rng.random_bool(0.7),
                }
            } else if rng.random_bool(0.8) {
                // A half day's punches near 13:30 carry their kind: the time alone would make an
                // arrival after a morning off a check-out.
                Channel::Bulk {
                    labelled: e.night || half.is_some() || rng.random_bool(0.8),
                }
            } else {
                Channel::Single {
                    labelled: e.night || half.is_some() || rng.random_bool(0.5),
                }
            }
        };
        let mut add = |kind: Kind, at, rng: &mut StdRng| {
            let channel = channel(kind, rng);
            p.punches.push(Planned {
                punch: Punch {
                    emp: e.id.clone(),
                    at,
                    kind,
                },
                channel,
            });
        };
        if with_in {
            add(Kind::In, in_at, rng);
            // A second scan a few minutes later: the first check-in still wins.
            if !offline && !desk && rng.random_bool(0.05) {
                add(
                    Kind::In,
                    in_at + chrono::Duration::seconds(rng.random_range(30..600)),
                    rng,
                );
            }
        }
        if with_out {
            add(Kind::Out, out_at, rng);
        }
    }
    p
}

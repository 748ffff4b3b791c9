//! The absence alerts' marks (`Keys::absence_alert`): which departments' alerts of a date and
//! shift are sent, a relay's claim on one while it sends it, and the mark once the broker
//! confirmed it.

use anyhow::{Context, Result};
use chrono::NaiveDate;

use crate::redis::handle::Board;

/// Marks read per round trip.
const PER_PIPELINE: usize = 500;

impl Board {
    /// Each department's alert mark of `date` and `shift` (`None`: neither claimed nor sent).
    pub(crate) fn alert_marks(
        &mut self,
        date: NaiveDate,
        shift: &str,
        depts: &[String],
    ) -> Result<Vec<Option<String>>> {
        let mut out = Vec::with_capacity(depts.len());
        for chunk in depts.chunks(PER_PIPELINE) {
            let mut pipe = redis::pipe();
            for d in chunk {
                pipe.get(self.keys.absence_alert(d, date, shift));
            }
            let marks: Vec<Option<String>> = pipe
                .query(&mut self.con)
                .context("reading the absence alerts' marks from Redis")?;
            out.extend(marks);
        }
        Ok(out)
    }

    /// Claim a department's alert for `claim_ms` (one SET NX: of several relays one wins):
    /// `None` when this relay now holds it, else the mark that was there (`sent`, or another
    /// relay's claim). A claim that is never marked sent (the relay died) expires, and the
    /// next relay sends the alert: late, not never.
    pub(crate) fn claim_alert(
        &mut self,
        dept: &str,
        date: NaiveDate,
        shift: &str,
        me: &str,
        claim_ms: u64,
    ) -> Result<Option<String>> {
        redis::cmd("SET")
            .arg(self.keys.absence_alert(dept, date, shift))
            .arg(format!("claim:{me}"))
            .arg("NX")
            .arg("GET")
            .arg("PX")
            .arg(claim_ms)
            .query(&mut self.con)
            .context("claiming an absence alert in Redis")
    }

    /// Mark a department's alert done (`sent`, or `nobody` missing), kept for `keep_ms`.
    pub(crate) fn mark_alert(
        &mut self,
        dept: &str,
        date: NaiveDate,
        shift: &str,
        mark: &str,
        keep_ms: u64,
    ) -> Result<()> {
        redis::cmd("SET")
            .arg(self.keys.absence_alert(dept, date, shift))
            .arg(mark)
            .arg("PX")
            .arg(keep_ms)
            .query::<()>(&mut self.con)
            .context("marking an absence alert sent in Redis")
    }
}

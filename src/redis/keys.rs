//! Every Redis key name, in one place. All start with the namespace; the keys one check-in
//! touches (its department's board and outbox) share the Redis Cluster hash tag `{DEPT}`.

use chrono::NaiveDate;

/// How many hashes the roster cache is split into.
pub const ROSTER_PARTS: u32 = 64;

/// Which part of the roster cache holds an employee: FNV-1a of the id, stable across versions
/// and machines (the cache is shared by every process that reads it).
pub(crate) fn roster_part_of(employee_id: &str) -> u32 {
    let h = employee_id
        .bytes()
        .fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(b)).wrapping_mul(0x0100_0193));
    h % ROSTER_PARTS
}

/// Key names under one namespace.
#[derive(Debug, Clone)]
pub struct Keys {
    ns: String,
}

impl Keys {
    pub fn new(namespace: &str) -> Self {
        Keys {
            ns: namespace.to_string(),
        }
    }

    pub fn namespace(&self) -> &str {
        &self.ns
    }

    /// The part of the roster cache that holds an employee: a hash, employee id ->
    /// `"<department id>\t<name>"`, written by `org import`, by a check-in that found an employee
    /// in MySQL only, and rebuilt by a layout when the roster changed. The cache is split
    /// into [`ROSTER_PARTS`] hashes, each its own hash tag, so that at a million employees it is
    /// no single 79 MB key on one master of a Redis Cluster.
    pub fn roster(&self, employee_id: &str) -> String {
        self.roster_part(roster_part_of(employee_id))
    }

    /// One part of the roster cache (see [`Keys::roster`]).
    pub fn roster_part(&self, part: u32) -> String {
        format!("{}:roster:{{r{part:02}}}", self.ns)
    }

    /// A part of the roster cache being rebuilt: it replaces [`Keys::roster_part`] (RENAME,
    /// same hash tag) once the whole roster is written, so a lookup never sees half a cache.
    pub fn roster_part_next(&self, part: u32) -> String {
        format!("{}:roster:{{r{part:02}}}:next", self.ns)
    }

    /// The MySQL roster the cache was last rebuilt from (`crate::mysql::people::roster_rows::Stamp`): a layout
    /// rewrites the cache only when MySQL's differs.
    /// The copy of the shift table the punch path reads (`redis/copies/shift_copy.rs`): field `table`
    /// holds the shifts and the departments' assignments, `e:<id>` an employee's own.
    pub fn shifts(&self) -> String {
        format!("{}:{{shifts}}", self.ns)
    }

    /// The shift copy being rewritten: it replaces [`Keys::shifts`] whole (RENAME, same tag).
    pub fn shifts_next(&self) -> String {
        format!("{}:{{shifts}}:next", self.ns)
    }

    /// The copy of the key registry consumers and kiosks read (`redis/copies/key_registry.rs`): field
    /// = key id, value = its public key, replay authority and revocation instant.
    pub fn key_registry(&self) -> String {
        format!("{}:{{keys}}", self.ns)
    }

    /// The registry copy being rewritten: it replaces [`Keys::key_registry`] whole (RENAME).
    pub fn key_registry_next(&self) -> String {
        format!("{}:{{keys}}:next", self.ns)
    }

    pub fn roster_stamp(&self) -> String {
        format!("{}:roster-stamp", self.ns)
    }

    /// The single roster hash of earlier versions, deleted when the cache is rewritten.
    pub fn legacy_roster(&self) -> String {
        format!("{}:roster", self.ns)
    }

    /// Hash of one department's day: employee id -> that day's punches (see `board` module).
    pub fn board(&self, dept: &str, date: NaiveDate) -> String {
        format!("{}:board:{{{dept}}}:{}", self.ns, date.format("%Y-%m-%d"))
    }

    /// Settle's own copy of a department's board for a day: the live board renamed (or merged)
    /// into it at the cut-over, so that a punch arriving while settle runs lands on a fresh live
    /// board instead of one settle is about to delete. Same hash tag as the live board.
    pub fn settle_board(&self, dept: &str, date: NaiveDate) -> String {
        format!("{}:settle:board:{{{dept}}}:{}", self.ns, date.format("%Y-%m-%d"))
    }

    /// What a department's settled day held, kept after settle released its board: employee id
    /// -> the day's punch tokens, as the board had them. The punch script counts a punch found
    /// here a repeat, so a punch sent again after settle is not a new punch; it expires once no
    /// punch on that day is accepted (`policy.max_backdate_days`). Same hash tag as the board;
    /// not a `:board:` key (no board: nothing to settle, nothing to lay out). A kiosk's Redis
    /// account needs it whole (Redis asks full access to a script's keys), as it does its boards.
    pub fn settled_board(&self, dept: &str, date: NaiveDate) -> String {
        format!("{}:settled:{{{dept}}}:{}", self.ns, date.format("%Y-%m-%d"))
    }

    /// Hash of the days settle wrote to MySQL, date (YYYY-MM-DD) -> what MySQL held once the
    /// run committed (`redis/settled_days.rs`): rows and rows with punches. Kept in Redis, not
    /// MySQL, so that a fail-over to a lagging MySQL replica cannot take it with the rows it
    /// lost. One small key with its own hash tag, read whole on a Redis Cluster too.
    pub fn settled_days(&self) -> String {
        format!("{}:settled-days:{{settled}}", self.ns)
    }

    /// A department's punch log of one day for the punches that came one way (`how`: live, bulk
    /// or recovered): event id -> its record (see `punch.lua`), written to MySQL's punch_log by
    /// settle. Same hash tag as the board.
    pub fn punch_log(&self, dept: &str, date: NaiveDate, how: &str) -> String {
        format!("{}:punchlog:{{{dept}}}:{}:{how}", self.ns, date.format("%Y-%m-%d"))
    }

    /// Settle's punch log of one day, moved out of the live key with the board.
    pub fn settle_punch_log(&self, dept: &str, date: NaiveDate, how: &str) -> String {
        format!(
            "{}:settle:punchlog:{{{dept}}}:{}:{how}",
            self.ns,
            date.format("%Y-%m-%d")
        )
    }

    /// Set of the dates (YYYY-MM-DD) for which a department has a board, live or settle's:
    /// how settle finds the days left to settle without a keyspace SCAN (which a Redis
    /// Cluster does not offer across nodes). Written by the punch and layout scripts.
    pub fn board_days(&self, dept: &str) -> String {
        format!("{}:days:{{{dept}}}", self.ns)
    }

    /// Hash of the moves `org import` has still to finish: employee id -> the departments
    /// (comma-separated) whose boards may still hold their days. Written before the roster
    /// changes, emptied once the days moved (`redis/moves.rs`), so that a rerun finishes a
    /// move a crash cut short. Its own hash tag: a move touches two departments' slots anyway.
    pub fn moves(&self) -> String {
        format!("{}:moves:{{moves}}", self.ns)
    }

    /// Hash of the departments each employee left and when (`D1@<unix secs>,...`, see
    /// `domain::event::membership`): written by `org import` with its moves and kept, so that a
    /// consumer accepts a moved employee's earlier events of their old department. Same
    /// hash tag as [`Keys::moves`]: both are written in one pipeline.
    pub fn departures(&self) -> String {
        format!("{}:departures:{{moves}}", self.ns)
    }

    /// Hash of a department's events not yet confirmed by the broker: event id -> the event's
    /// compact record (see `event::render`).
    pub fn outbox(&self, dept: &str) -> String {
        format!("{}:outbox:{{{dept}}}", self.ns)
    }

    /// Hash of the events consumers refused (signature or roster), by class
    /// (`domain::event::signing::Refusal::class`) -> count, for `doctor`. Its own hash tag.
    pub fn refused(&self) -> String {
        format!("{}:refused:{{signing}}", self.ns)
    }

    /// A department's absence alert of a date and shift (`ops/relay/alerts.rs`): a relay's
    /// claim (`claim:<relay>`, expiring) while it sends it, then `sent` (or `nobody` when all
    /// had arrived) for a week. Same hash tag as the board: one SET NX decides which relay sends.
    pub fn absence_alert(&self, dept: &str, date: NaiveDate, shift: &str) -> String {
        format!("{}:alert:{{{dept}}}:{}:{shift}", self.ns, date.format("%Y-%m-%d"))
    }

    /// Set of the event ids a department's watchers have shown (dedup across restarts).
    pub fn shown(&self, dept: &str) -> String {
        format!("{}:shown:{{{dept}}}", self.ns)
    }

    /// A live `relay --follow`'s heartbeat: a string with a TTL, refreshed by the relay while
    /// it is connected to the broker. While it exists, a check-in hands its event to the relay
    /// instead of publishing it. Its own hash tag `{relay}`, shared with the wake-up list, so
    /// that one script reads the one and pushes to the other on a Redis Cluster too.
    pub fn relay_heartbeat(&self) -> String {
        format!("{}:relay:{{relay}}:alive", self.ns)
    }

    /// List of departments whose outbox a check-in just handed to the relay (RPUSH by the
    /// check-in, BLPOP by `relay --follow`). Only a nudge: the event itself is in the outbox.
    pub fn relay_wake(&self) -> String {
        format!("{}:relay:{{relay}}:wake", self.ns)
    }

    /// A short-lived mark a repeated punch writes on its department's node before `WAIT`, so
    /// that the wait covers every write the node holds (the first punch's included): a
    /// connection that wrote nothing would see every replica count at once. Same hash tag as
    /// the board; it expires by itself.
    pub fn replication_mark(&self, dept: &str) -> String {
        format!("{}:replicated:{{{dept}}}", self.ns)
    }

    /// Pattern that matches every outbox of the namespace (for `relay` and `settle`).
    pub fn outbox_pattern(&self) -> String {
        format!("{}:outbox:*", self.ns)
    }

    /// Pattern that matches every live board of one date (the benchmark measures their memory;
    /// settle never scans: it reads the days sets and the roster's departments).
    pub fn board_pattern(&self, date: NaiveDate) -> String {
        format!("{}:board:*:{}", self.ns, date.format("%Y-%m-%d"))
    }

    /// Pattern that matches every board of the namespace, whatever its day (for `doctor`).
    pub fn any_board_pattern(&self) -> String {
        format!("{}:board:*", self.ns)
    }

    /// The day of a board key (its last segment).
    pub fn date_of(key: &str) -> Option<NaiveDate> {
        NaiveDate::parse_from_str(key.rsplit(':').next()?, "%Y-%m-%d").ok()
    }

    /// The department id inside a board or outbox key (between the braces).
    pub fn dept_of(key: &str) -> Option<&str> {
        let start = key.find('{')? + 1;
        let end = start + key[start..].find('}')?;
        Some(&key[start..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_and_outbox_share_the_department_hash_tag() {
        let k = Keys::new("att");
        let d = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        assert_eq!(k.board("D042", d), "att:board:{D042}:2026-11-30");
        assert_eq!(k.outbox("D042"), "att:outbox:{D042}");
        assert_eq!(Keys::dept_of(&k.board("D042", d)), Some("D042"));
        assert_eq!(Keys::dept_of(&k.outbox("D-7")), Some("D-7"));
        assert_eq!(k.settle_board("D042", d), "att:settle:board:{D042}:2026-11-30");
        assert_eq!(k.board_days("D042"), "att:days:{D042}");
        assert_eq!(k.punch_log("D042", d, "live"), "att:punchlog:{D042}:2026-11-30:live");
        assert_eq!(
            k.settle_punch_log("D042", d, "bulk"),
            "att:settle:punchlog:{D042}:2026-11-30:bulk"
        );
        assert_eq!(k.moves(), "att:moves:{moves}");
        assert_eq!(Keys::date_of(&k.board("D042", d)), Some(d));
        // The heartbeat and the wake-up list share one slot, apart from any department's.
        assert_eq!(k.relay_heartbeat(), "att:relay:{relay}:alive");
        assert_eq!(k.relay_wake(), "att:relay:{relay}:wake");
    }

    #[test]
    fn the_roster_cache_spreads_over_its_parts() {
        let k = Keys::new("att");
        assert_eq!(k.roster("E000001"), k.roster("E000001"));
        let mut used = std::collections::HashSet::new();
        for i in 0..10_000 {
            used.insert(k.roster(&format!("E{i:06}")));
        }
        assert_eq!(used.len(), ROSTER_PARTS as usize);
        assert!(k.roster_part(7).ends_with(":roster:{r07}"));
    }
}

//! The Redis roster cache (employee id -> department and name, in [`ROSTER_PARTS`] hashes):
//! looked up by every check-in, written for a few employees at a time (`org import`, a check-in
//! that found someone in MySQL only), and rebuilt whole by a layout only when the MySQL roster
//! changed, so that a day's layout does not rewrite a million fields that are already there.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use chrono::Utc;
use redis::ConnectionLike;

use crate::domain::day::clock::Reading;
use crate::domain::people::employment::Employment;
use crate::domain::people::roster::{Member, Stamp};
use crate::redis::board::Employee;
use crate::redis::keys::{roster_part_of, ROSTER_PARTS};
use crate::redis::Board;

impl Board {
    /// Look employees up in the Redis roster cache: one HMGET per roster part, pipelined, 5,000
    /// ids at a time; `None` for a miss. On a Redis Cluster, a part that cannot be read (its
    /// master lost, before its replica takes over) answers misses too, so that the caller asks
    /// MySQL for those employees only: no check-in fails for a cache.
    pub fn lookup_many<S: AsRef<str>>(&mut self, ids: &[S]) -> Result<Vec<Option<Employee>>> {
        Ok(self.lookup(ids, false)?.0)
    }

    /// [`Board::lookup_many`]; with `timed`, the first pipeline also asks for the server's
    /// `TIME` (no round trip of its own), read with this host's clock around it (one node
    /// only: a cluster's pipeline routes by key).
    pub(in crate::redis) fn lookup<S: AsRef<str>>(
        &mut self,
        ids: &[S],
        timed: bool,
    ) -> Result<(Vec<Option<Employee>>, Option<Reading>)> {
        self.lookup_with(ids, timed, true)
    }

    /// [`Board::lookup`]; `prefetch`: for one employee, also read their shift fields in the
    /// same round trip (refused by an account's ACL: looked up again without, so that the
    /// refusal named is the roster's own).
    fn lookup_with<S: AsRef<str>>(
        &mut self,
        ids: &[S],
        timed: bool,
        prefetch_shifts: bool,
    ) -> Result<(Vec<Option<Employee>>, Option<Reading>)> {
        let cluster = self.is_cluster();
        let (con, keys) = (&mut self.con, &self.keys);
        let mut out = Vec::with_capacity(ids.len());
        let mut reading = None;
        let mut prefetched = None;
        for chunk in ids.chunks(5_000) {
            let mut parts: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
            let mut order = Vec::with_capacity(chunk.len());
            for id in chunk {
                let part = roster_part_of(id.as_ref());
                let at = parts.entry(part).or_default();
                order.push((part, at.len()));
                at.push(id.as_ref());
            }
            let mut pipe = redis::pipe();
            let time = timed && reading.is_none();
            if time {
                pipe.cmd("TIME");
            }
            // One employee (a single check-in): their shift fields ride in the same round trip.
            let prefetch = prefetch_shifts && time && !cluster && ids.len() == 1;
            if prefetch {
                pipe.cmd("HMGET")
                    .arg(keys.shifts())
                    .arg("table")
                    .arg(format!("e:{}", ids[0].as_ref()));
            }
            for (&part, ids) in &parts {
                pipe.cmd("HMGET").arg(keys.roster_part(part)).arg(ids);
            }
            let before = Utc::now();
            let replies: Vec<Option<redis::Value>> = match pipe.query::<Vec<redis::Value>>(con) {
                Ok(mut replies) => {
                    if time {
                        let server = crate::redis::server::clock::server_time(replies.remove(0))?;
                        reading = Some(Reading {
                            before,
                            server,
                            after: Utc::now(),
                        });
                    }
                    if prefetch {
                        let fields: Vec<Option<String>> =
                            redis::from_redis_value(replies.remove(0)).context("reading the shift copy")?;
                        prefetched = Some(crate::redis::handle::Prefetch::new(ids[0].as_ref(), fields));
                    }
                    replies.into_iter().map(Some).collect()
                }
                Err(_) if prefetch => return self.lookup_with(ids, timed, false),
                Err(_) if cluster => parts
                    .iter()
                    .map(|(&part, ids)| {
                        let mut hmget = redis::cmd("HMGET");
                        hmget.arg(keys.roster_part(part)).arg(ids);
                        hmget.query(con).ok()
                    })
                    .collect(),
                Err(e) => return Err(e).context("reading the roster from Redis"),
            };
            let mut found: BTreeMap<u32, Vec<Option<Employee>>> = BTreeMap::new();
            for ((&part, ids), reply) in parts.iter().zip(replies) {
                let vals: Vec<Option<String>> = match reply {
                    Some(v) => redis::from_redis_value(v).context("reading the roster from Redis")?,
                    None => vec![None; ids.len()],
                };
                let decoded = ids
                    .iter()
                    .zip(vals)
                    .map(|(id, v)| v.and_then(|v| decode_roster(id, &v)));
                found.insert(part, decoded.collect());
            }
            out.extend(
                order
                    .into_iter()
                    .map(|(part, i)| found.get_mut(&part).and_then(|v| v[i].take())),
            );
        }
        self.shift_prefetch = prefetched;
        Ok((out, reading))
    }
}

fn decode_roster(id: &str, v: &str) -> Option<Employee> {
    let (dept, name, employment) = parse_cache_value(v)?;
    Some(Employee {
        id: id.to_string(),
        department_id: dept.to_string(),
        name: name.to_string(),
        employment,
    })
}

/// Fields queued per pipeline when writing the cache.
const FIELDS_PER_PIPELINE: usize = 20_000;

impl Board {
    /// Write employees into the Redis roster cache, grouped by roster part, up to 1,000 fields per
    /// HSET. The single hash of earlier versions goes.
    pub fn cache_roster<'a>(&mut self, members: impl IntoIterator<Item = &'a Member>) -> Result<usize> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut pipe = redis::pipe();
        pipe.del(keys.legacy_roster()).ignore();
        write_parts(con, pipe, members, |part| keys.roster_part(part)).map(|parts| parts.values().sum())
    }

    /// Read the cache's stamp and size (one pipeline: GET and an HLEN per part).
    pub fn roster_cache_state(&mut self) -> Result<CacheState> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut pipe = redis::pipe();
        pipe.get(keys.roster_stamp());
        for part in 0..ROSTER_PARTS {
            pipe.hlen(keys.roster_part(part));
        }
        let reply: Vec<redis::Value> = pipe.query(con).context("reading the roster cache's stamp in Redis")?;
        let (stamp, lens) = reply.split_first().context("an empty reply")?;
        let stamp: Option<String> = redis::from_redis_value_ref(stamp)?;
        let mut held = 0u64;
        for len in lens {
            held += redis::from_redis_value_ref::<u64>(len)?;
        }
        Ok(CacheState {
            stamp: stamp.as_deref().and_then(Stamp::parse),
            held,
        })
    }

    /// Take employees out of the Redis roster cache (those taken off the roster altogether).
    pub fn uncache_roster(&mut self, ids: &[&str]) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.hdel(keys.roster(id), id).ignore();
        }
        pipe.query::<()>(con).context("writing the roster to Redis")
    }
}

/// An employee as the cache keeps them: `department\tname`, then `\tstart\tend` when they have
/// employment dates (see [`Employment::cache_suffix`]).
pub(crate) fn cache_value(m: &Member) -> String {
    format!("{}\t{}{}", m.department_id, m.name, m.employment.cache_suffix())
}

/// Back from [`cache_value`]: (department, name, employment); `None` when it does not parse.
pub(crate) fn parse_cache_value(v: &str) -> Option<(&str, &str, Employment)> {
    let (dept, rest) = v.split_once('\t')?;
    // A name holds no tab (refused at the door): two more fields are the dates.
    let mut back = rest.rsplitn(3, '\t');
    let (end, start, name) = (back.next()?, back.next(), back.next());
    match (start, name) {
        (Some(start), Some(name)) => Some((dept, name, Employment::from_cache(&format!("{start}\t{end}"))?)),
        _ => Some((dept, rest, Employment::default())),
    }
}

/// HSET the members into the hash `key(part)` of each one's part; returns how many went into
/// each part. `pipe` may hold commands to send first.
fn write_parts<'a>(
    con: &mut impl ConnectionLike,
    mut pipe: redis::Pipeline,
    members: impl IntoIterator<Item = &'a Member>,
    key: impl Fn(u32) -> String,
) -> Result<BTreeMap<u32, usize>> {
    let mut parts: BTreeMap<u32, Vec<(&str, String)>> = BTreeMap::new();
    for m in members {
        parts
            .entry(roster_part_of(&m.employee_id))
            .or_default()
            .push((&m.employee_id, cache_value(m)));
    }
    let mut queued = 0;
    for (&part, items) in &parts {
        for fields in items.chunks(1000) {
            pipe.hset_multiple(key(part), fields).ignore();
            queued += fields.len();
            if queued >= FIELDS_PER_PIPELINE {
                pipe.query::<()>(con).context("writing the roster to Redis")?;
                pipe = redis::pipe();
                queued = 0;
            }
        }
    }
    if queued > 0 {
        pipe.query::<()>(con).context("writing the roster to Redis")?;
    }
    Ok(parts.into_iter().map(|(p, v)| (p, v.len())).collect())
}

/// What the cache says of itself: the stamp of its last rebuild, and how many employees its
/// parts hold.
#[derive(Debug, Clone)]
pub struct CacheState {
    pub stamp: Option<Stamp>,
    pub held: u64,
}

impl CacheState {
    /// Whether the cache still holds the roster it was rebuilt from, and MySQL's roster has not
    /// changed since (`changed`: its last change now; a row deleted shows only in the count the
    /// layout reads, see [`Stamp`]).
    pub fn current(&self, changed: &str) -> bool {
        self.stamp
            .as_ref()
            .is_some_and(|s| s.changed == changed && s.active == self.held)
    }
}

/// A rebuild of the whole cache: the roster goes into fresh parts as it is read, and replaces
/// the live ones only at [`RosterRebuild::finish`], so that a lookup meanwhile sees the old
/// cache whole (and an employee who left is gone after). A rebuild cut off leaves the live
/// cache as it was, unstamped for this roster: the next layout starts over.
pub(crate) struct RosterRebuild {
    written: BTreeMap<u32, usize>,
}

impl RosterRebuild {
    /// Start a rebuild (the fresh parts of one cut off before are dropped).
    pub(crate) fn start(board: &mut Board) -> Result<RosterRebuild> {
        let (con, keys) = (&mut board.con, &board.keys);
        let mut pipe = redis::pipe();
        for part in 0..ROSTER_PARTS {
            pipe.del(keys.roster_part_next(part)).ignore();
        }
        pipe.query::<()>(con)
            .context("starting the roster cache's rebuild in Redis")?;
        Ok(RosterRebuild {
            written: BTreeMap::new(),
        })
    }

    /// Write some of the roster into the fresh parts.
    pub(crate) fn add(&mut self, board: &mut Board, members: &[Member]) -> Result<()> {
        let (con, keys) = (&mut board.con, &board.keys);
        for (part, n) in write_parts(con, redis::pipe(), members, |p| keys.roster_part_next(p))? {
            *self.written.entry(part).or_default() += n;
        }
        Ok(())
    }

    /// Swap the fresh parts in (a part nobody was written to is emptied), then stamp the cache
    /// with the roster it now holds. One RENAME at a time: a cluster pipeline refuses them,
    /// and 64 round trips are nothing beside the writes.
    pub(crate) fn finish(self, board: &mut Board, stamp: &Stamp) -> Result<()> {
        let (con, keys) = (&mut board.con, &board.keys);
        let mut empty = redis::pipe();
        empty.del(keys.legacy_roster()).ignore();
        for part in 0..ROSTER_PARTS {
            if self.written.contains_key(&part) {
                redis::cmd("RENAME")
                    .arg(keys.roster_part_next(part))
                    .arg(keys.roster_part(part))
                    .query::<()>(con)
                    .context("swapping in the rebuilt roster cache in Redis")?;
            } else {
                empty.del(keys.roster_part(part)).ignore();
            }
        }
        empty
            .query::<()>(con)
            .context("swapping in the rebuilt roster cache in Redis")?;
        // Last: a stamp says the whole cache is there.
        redis::cmd("SET")
            .arg(keys.roster_stamp())
            .arg(stamp.as_text())
            .query::<()>(con)
            .context("stamping the roster cache in Redis")?;
        Ok(())
    }
}

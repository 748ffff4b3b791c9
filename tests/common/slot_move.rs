//! Moving a slot between the masters of a test's own cluster by hand, as `redis-cli --cluster
//! reshard` does one slot at a time, so that a test can hold a slot half-moved as long as it
//! needs; and what the nodes answered meanwhile.

use super::cluster::{node, Cluster};

impl Cluster {
    /// `CLUSTER` subcommand on node `i`.
    fn cluster_cmd<T: redis::FromRedisValue>(&self, i: usize, args: &[&str]) -> T {
        redis::cmd("CLUSTER")
            .arg(args)
            .query(&mut node(self.ports[i]).unwrap())
            .unwrap()
    }

    /// Start moving `key`'s slot from its master to node `to`, as `redis-cli --cluster
    /// reshard` does (IMPORTING on the target first, then MIGRATING on the source); no key
    /// moves yet. Returns (slot, source).
    pub fn start_slot_move(&self, key: &str, to: usize) -> (u16, usize) {
        let from = self.master_of(key);
        let slot: u16 = self.cluster_cmd(from, &["KEYSLOT", key]);
        let (from_id, to_id): (String, String) = (self.cluster_cmd(from, &["MYID"]), self.cluster_cmd(to, &["MYID"]));
        let _: () = self.cluster_cmd(to, &["SETSLOT", &slot.to_string(), "IMPORTING", &from_id]);
        let _: () = self.cluster_cmd(from, &["SETSLOT", &slot.to_string(), "MIGRATING", &to_id]);
        (slot, from)
    }

    /// `MIGRATE` some keys from node `from` to node `to`.
    pub fn migrate(&self, from: usize, to: usize, keys: &[String]) {
        let _: () = redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(self.ports[to])
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(keys)
            .query(&mut node(self.ports[from]).unwrap())
            .unwrap();
    }

    /// End a slot's move: its remaining keys migrate, then every master learns its new owner.
    pub fn finish_slot_move(&self, slot: u16, from: usize, to: usize) {
        loop {
            let keys: Vec<String> = self.cluster_cmd(from, &["GETKEYSINSLOT", &slot.to_string(), "100"]);
            if keys.is_empty() {
                break;
            }
            self.migrate(from, to, &keys);
        }
        let to_id: String = self.cluster_cmd(to, &["MYID"]);
        for i in [to, from].into_iter().chain(self.masters()) {
            let _: () = self.cluster_cmd(i, &["SETSLOT", &slot.to_string(), "NODE", &to_id]);
        }
    }

    /// How often node `i` has answered with an error code (`INFO errorstats`).
    pub fn errors_answered(&self, i: usize, code: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("errorstats")
            .query(&mut node(self.ports[i]).unwrap())
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("errorstat_{code}:count=")))
            .map_or(0, |n| n.trim().parse().unwrap())
    }
}

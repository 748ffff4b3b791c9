//! The kiosk's Redis account (docs/security.md, "A kiosk's Redis account"): a Redis ACL user
//! confined to the namespace's keys and the commands of `KIOSK_COMMANDS` runs `checkin` and
//! `status`; a command outside its role (settle) and another namespace's keys are refused.

mod common;

use common::{TestEnv, REDIS_URL};

/// The ACL rules of a kiosk, as docs/security.md gives them (keys and channels apart).
const KIOSK_COMMANDS: &str = "-@all +evalsha +eval +script|load +hmget +hget +hset +hdel +hscan +exists +time +sadd \
     +object|encoding +ping +client|setname +select +hello +auth";

/// A Redis ACL user of the test's own, deleted at the end (also when the test fails).
struct AclUser {
    name: String,
    password: String,
}

impl AclUser {
    fn create(env: &TestEnv) -> AclUser {
        let u = AclUser {
            name: format!("kiosk-{}", env.ns),
            password: format!("pw{}", uuid::Uuid::new_v4().simple()),
        };
        let mut cmd = redis::cmd("ACL");
        cmd.arg("SETUSER")
            .arg(&u.name)
            .arg("on")
            .arg(format!(">{}", u.password))
            .arg(format!("~{}:*", env.ns))
            .arg("resetchannels");
        for rule in KIOSK_COMMANDS.split_whitespace() {
            cmd.arg(rule);
        }
        let _: () = cmd.query(&mut env.redis()).unwrap();
        u
    }

    fn url(&self) -> String {
        REDIS_URL.replace("redis://", &format!("redis://{}:{}@", self.name, self.password))
    }
}

impl Drop for AclUser {
    fn drop(&mut self) {
        if let Ok(mut con) = redis::Client::open(REDIS_URL).and_then(|c| c.get_connection()) {
            let _: redis::RedisResult<()> = redis::cmd("ACL").arg("DELUSER").arg(&self.name).query(&mut con);
        }
    }
}

#[test]
fn a_kiosk_account_checks_in_and_reads_status_and_nothing_more() {
    let env = TestEnv::with_roster("UTC", 6, 1);
    // The employees are looked up once as the owner (the cache filled), as `org import` does.
    env.ok(&["status", "E000002"]);
    let kiosk = AclUser::create(&env);
    let as_kiosk = |args: &[&str], vars: &[(&str, &str)]| {
        let mut c = env.cmd();
        c.env("ATTENDANCE_REDIS_URL", kiosk.url()).args(args);
        for (k, v) in vars {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let o = as_kiosk(&["checkin", "E000002", "--json"], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let board = env.board("D001", c["work_date"].as_str().unwrap());
    assert!(board.contains_key("E000002"), "the punch is on the board: {board:?}");
    let o = as_kiosk(&["status", "E000002", "--json"], &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(s["first_in"].is_string(), "{s}");

    // Outside the role: settle reads and deletes boards, which a kiosk may not.
    let before = env.redis_snapshot();
    let o = as_kiosk(&["settle", "-q"], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("no permissions"), "{err}");
    // Another namespace's keys are out of its reach too.
    let o = as_kiosk(&["checkin", "E000003"], &[("ATTENDANCE_NAMESPACE", "elsewhere")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("no permissions"), "{err}");
    assert_eq!(env.redis_snapshot(), before, "the refused commands changed nothing");
}

//! A role's accounts on the three shared services (docs/security.md, "The trust model, role by
//! role"), named after the test's namespace and removed on drop (also when the test fails): a
//! Redis ACL user, a RabbitMQ user with permissions on the vhost `/` (made with `rabbitmqctl`),
//! a MySQL user with grants on the test's database; and the config file that runs the binary
//! as that role (URLs naming the users, passwords in `*_password_file`s).
//!
//! A store the role has no account on is named with a user that does not exist, so that any
//! use of it is refused: a command of the role that touched it would fail the test.

use std::path::PathBuf;
use std::process::{Command, Output};

use mysql::prelude::Queryable;

use super::{expect_ok, TestEnv, MYSQL_SERVER};

/// What a role is granted, with `{ns}` standing for the test's namespace (regex-escaped in
/// RabbitMQ permissions: namespaces are letters and digits) and `{db}` for its database.
#[derive(Default)]
pub struct Grants<'a> {
    /// ACL rules after `on >PASSWORD resetchannels` (keys, commands); `None`: no Redis account.
    pub redis: Option<&'a str>,
    /// configure, write and read regexes on the vhost `/`; `None`: no RabbitMQ account.
    pub rabbit: Option<[&'a str; 3]>,
    /// `PRIVILEGES ON {db}.TABLE` each; empty: no MySQL account.
    pub mysql: &'a [&'a str],
    /// More lines for the role's config file (e.g. `[amqp]` and `declare = false`).
    pub config: &'a str,
}

/// One role's accounts and config file.
pub struct Role {
    /// The user name on every store: `<role>_<ns>`.
    pub user: String,
    password: String,
    redis: bool,
    rabbit: bool,
    mysql: bool,
    pub config: PathBuf,
}

fn root_mysql() -> mysql::PooledConn {
    mysql::Pool::new(MYSQL_SERVER).unwrap().get_conn().unwrap()
}

fn rabbitmqctl(args: &[&str]) -> Output {
    Command::new("rabbitmqctl").arg("-q").args(args).output().unwrap()
}

impl Role {
    pub fn create(env: &TestEnv, role: &str, g: &Grants) -> Role {
        let fill = |s: &str| s.replace("{ns}", &env.ns).replace("{db}", &format!("`{}`", env.db));
        let r = Role {
            user: format!("{role}_{}", env.ns),
            password: format!("pw{}", uuid::Uuid::new_v4().simple()),
            redis: g.redis.is_some(),
            rabbit: g.rabbit.is_some(),
            mysql: !g.mysql.is_empty(),
            config: env.dir.join(format!("{role}.toml")),
        };
        if let Some(rules) = g.redis {
            let mut cmd = redis::cmd("ACL");
            cmd.arg("SETUSER")
                .arg(&r.user)
                .arg("on")
                .arg(format!(">{}", r.password))
                .arg("resetchannels");
            for rule in fill(rules).split_whitespace() {
                cmd.arg(rule);
            }
            let _: () = cmd.query(&mut env.redis()).unwrap();
        }
        if let Some(perms) = g.rabbit {
            let o = rabbitmqctl(&["add_user", &r.user, &r.password]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let perms = perms.map(&fill);
            let o = rabbitmqctl(&["set_permissions", "-p", "/", &r.user, &perms[0], &perms[1], &perms[2]]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        if r.mysql {
            let mut root = root_mysql();
            // Both ways in: TCP and the local socket, which the client prefers when it can.
            for host in ["localhost", "%"] {
                root.query_drop(format!(
                    "CREATE USER '{}'@'{host}' IDENTIFIED BY '{}'",
                    r.user, r.password
                ))
                .unwrap();
                for grant in g.mysql {
                    root.query_drop(format!("GRANT {} TO '{}'@'{host}'", fill(grant), r.user))
                        .unwrap();
                }
            }
        }
        let pw = env.file(&format!("{role}.pw"), &format!("{}\n", r.password));
        let user = |has: bool| {
            if has {
                r.user.clone()
            } else {
                format!("none_{}", env.ns)
            }
        };
        env.file(
            &format!("{role}.toml"),
            &format!(
                "redis_url = \"redis://{}@127.0.0.1:6379/\"\nmysql_url = \"mysql://{}@127.0.0.1:3306/{}\"\n\
                 amqp_url = \"amqp://{}@127.0.0.1:5672/%2f\"\nredis_password_file = {pw:?}\n\
                 mysql_password_file = {pw:?}\namqp_password_file = {pw:?}\n{}\n",
                user(r.redis),
                user(r.mysql),
                env.db,
                user(r.rabbit),
                g.config
            ),
        );
        r
    }

    /// The role's MySQL URL, password included.
    pub fn mysql_url(&self, env: &TestEnv) -> String {
        format!("mysql://{}:{}@127.0.0.1:3306/{}", self.user, self.password, env.db)
    }

    /// The role's password (the same on every store it has an account on).
    pub fn password(&self) -> &str {
        &self.password
    }

    /// The binary as this role: the test's settings, but the stores' URLs from the role's
    /// config file.
    pub fn cmd(&self, env: &TestEnv) -> Command {
        let mut c = env.std_cmd();
        for k in ["ATTENDANCE_REDIS_URL", "ATTENDANCE_MYSQL_URL", "ATTENDANCE_AMQP_URL"] {
            c.env_remove(k);
        }
        c.env("ATTENDANCE_CONFIG", &self.config);
        c
    }

    pub fn run(&self, env: &TestEnv, args: &[&str]) -> Output {
        self.cmd(env).args(args).output().unwrap()
    }

    /// Run and require exit 0; returns stdout.
    pub fn ok(&self, env: &TestEnv, args: &[&str]) -> String {
        expect_ok(args, self.run(env, args))
    }

    /// Run and require the exit code; returns stderr.
    pub fn fails(&self, env: &TestEnv, args: &[&str], code: i32) -> String {
        let o = self.run(env, args);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(code), "{} {args:?}: {err}", self.user);
        err
    }
}

impl Drop for Role {
    fn drop(&mut self) {
        if self.redis {
            if let Ok(mut con) = redis::Client::open(super::REDIS_URL).and_then(|c| c.get_connection()) {
                let _: redis::RedisResult<()> = redis::cmd("ACL").arg("DELUSER").arg(&self.user).query(&mut con);
            }
        }
        if self.rabbit {
            rabbitmqctl(&["delete_user", &self.user]);
        }
        if self.mysql {
            let mut root = root_mysql();
            for host in ["localhost", "%"] {
                let _ = root.query_drop(format!("DROP USER IF EXISTS '{}'@'{host}'", self.user));
            }
        }
    }
}

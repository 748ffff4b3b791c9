//! `attendance config show`: the configuration in force, each value with the layer it came
//! from, no secret anywhere in its output; its TOML read back gives the same configuration.

use crate::common;
use common::TestEnv;

/// Every secret of the run below; none may appear in stdout or stderr.
const SECRETS: [&str; 5] = ["hunter2", "qpw-secret", "filepw-secret", "rpw-secret", "mgmtpw-secret"];

#[test]
fn config_show_names_every_origin_and_hides_every_secret() {
    let env = TestEnv::new("UTC");
    let pw = env.file("mysql.pw", "filepw-secret\n");
    let file = env.file(
        "config.toml",
        &format!(
            "mysql_password_file = {:?}\nreport_mysql_url = \"mysql://r@127.0.0.1:3306/rep?password=qpw-secret\"\n\
             [journal]\nmax_age_days = 12\n[settle]\nwriters = 3\n",
            pw.display()
        ),
    );
    let o = env
        .cmd()
        .args([
            "--config",
            file.to_str().unwrap(),
            "config",
            "show",
            "--namespace",
            "flagged",
        ])
        .env("ATTENDANCE_REDIS_URL", "redis://:rpw-secret@127.0.0.1:6379/")
        .env(
            "ATTENDANCE_AMQP_MANAGEMENT_URL",
            "http://mon:mgmtpw-secret@127.0.0.1:15672",
        )
        .env("ATTENDANCE_SETTLE_WRITERS", "4")
        .env("ATTENDANCE_MYSQL_URL", "mysql://att@127.0.0.1:3306/x")
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{err}");
    for s in SECRETS.iter().chain([&env.key_secret.as_str()]) {
        assert!(!out.contains(s) && !err.contains(s), "{s} shown: {out}{err}");
    }
    let line = |start: &str| {
        out.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no {start} in {out}"))
            .to_string()
    };
    let path = file.display().to_string();
    assert!(out.contains(&format!("# config file: {path} (flag --config)")), "{out}");
    assert_eq!(line("namespace ="), "namespace = \"flagged\"  # flag --namespace");
    assert_eq!(
        line("redis_url ="),
        "redis_url = \"redis://:***@127.0.0.1:6379/\"  # environment ATTENDANCE_REDIS_URL"
    );
    // The password a file supplies: hidden, its file named, its origin said.
    assert_eq!(
        line("mysql_url ="),
        format!(
            "mysql_url = \"mysql://att:***@127.0.0.1:3306/x\"  # environment ATTENDANCE_MYSQL_URL; \
             password from mysql_password_file {} (file {path})",
            pw.display()
        )
    );
    assert!(line("report_mysql_url =").contains("?password=***\"  # file "), "{out}");
    assert_eq!(line("max_age_days ="), format!("max_age_days = 12  # file {path}"));
    // Policy is the rulebook's (`policy show`), not this host's.
    assert!(!out.contains("[policy]") && !out.contains("grace_minutes"), "{out}");
    // The environment beats the file.
    assert_eq!(
        line("writers ="),
        "writers = 4  # environment ATTENDANCE_SETTLE_WRITERS"
    );
    assert_eq!(line("queue_type ="), "queue_type = \"quorum\"  # default");
    assert!(line("management_url =").contains("mon:***@"), "{out}");
    assert!(line("key_file =").contains("signing.key\"  # environment ATTENDANCE_SIGNING_KEY_FILE"));

    // The same as JSON.
    let o = env
        .cmd()
        .args(["config", "show", "--json", "--config", file.to_str().unwrap()])
        .env("ATTENDANCE_SETTLE_WRITERS", "4")
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!SECRETS.iter().any(|s| text.contains(s)), "{text}");
    let j: serde_json::Value = serde_json::from_str(&text).unwrap();
    let writers = &j["settings"]["settle.writers"];
    assert_eq!(
        (&writers["value"], &writers["origin"], &writers["from"]),
        (&4.into(), &"environment".into(), &"ATTENDANCE_SETTLE_WRITERS".into())
    );
    assert_eq!(j["settings"]["journal.max_age_days"]["origin"], "file");
    assert!(j["settings"].get("policy.grace_minutes").is_none(), "{j}");
    assert_eq!(j["settings"]["namespace"]["origin"], "environment");
    assert_eq!(j["settings"]["amqp.queue_type"]["origin"], "default");
    assert_eq!(j["file"], path.as_str());
}

#[test]
fn config_shows_toml_read_back_as_the_file_gives_the_same_configuration() {
    let env = TestEnv::new("Europe/Paris");
    let file = env.file(
        "config.toml",
        "amqp_url = [\"amqp://n1:5672/%2f\", \"amqp://n2:5672/%2f\"]\n[settle]\nwriters = 5\n\
         batch_size = 300\n[journal]\nenabled = false\n",
    );
    // The file's broker list, not the test's broker.
    let show = |f: &std::path::Path| {
        let args = ["--config", f.to_str().unwrap(), "config", "show"];
        common::expect_ok(
            &args,
            env.cmd().args(args).env_remove("ATTENDANCE_AMQP_URL").output().unwrap(),
        )
    };
    let shown = show(&file);
    let again = env.file("again.toml", &shown);
    let reread = show(&again);
    let values = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| l.split("  #").next().unwrap().to_string())
            .collect()
    };
    assert_eq!(values(&reread), values(&shown), "{shown}");
    assert!(shown.contains("writers = 5  # file"), "{shown}");
    assert!(shown.contains("amqp_url = [\"amqp://n1:5672/%2f\", \"amqp://n2:5672/%2f\"]  # file"));
}

#[test]
fn config_show_of_a_bad_config_is_one_line_exit_2() {
    let env = TestEnv::new("UTC");
    let file = env.file("bad.toml", "[settle]\nwriters = 99\n");
    let e = env.fails(&["--config", file.to_str().unwrap(), "config", "show"], 2);
    assert!(e.contains("settle.writers") && e.trim().lines().count() == 1, "{e}");
}

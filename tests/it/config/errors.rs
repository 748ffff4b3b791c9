//! Config errors an admin can act on: each one line, exit 2, nothing written to any store, and
//! naming where the bad value came from (the file, the variable, the flag), the line and column
//! of a TOML slip, the closest key to a misspelt one, and, for a file that exists but cannot be
//! read, who may read it, instead of running on the defaults.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Output;

use crate::common;
use common::TestEnv;

/// `args` run as the binary, with this environment, and as the user `nobody` when the suite
/// runs as root (root reads any file whatever its mode: only another user meets a refusal).
fn run_as_nobody(env: &TestEnv, vars: &[(&str, &Path)], args: &[&str]) -> Output {
    let mut c = env.std_cmd();
    c.envs(vars.iter().map(|(k, v)| (k, v))).args(args);
    if common::rabbit::is_root() {
        c.uid(65534).gid(65534);
    }
    c.output().unwrap()
}

fn one_error_line(o: &Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("error: config: "), "{err}");
    err
}

/// `status E1` run with `--config file`: its one error line, checked as [`one_error_line`] does.
fn status_with_config(env: &TestEnv, file: &Path) -> String {
    let o = env
        .cmd()
        .args(["--config", file.to_str().unwrap(), "status", "E1"])
        .output()
        .unwrap();
    one_error_line(&o)
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn a_config_file_that_cannot_be_read_is_an_error_naming_who_may_read_it_never_the_defaults() {
    // Regression: a user outside the group of /etc/attendance (0750 root:attendance) ran on the
    // built-in defaults ("config file: none") and was then told to run `migrate`. Here the same
    // shape in the test's folder: the user's config place, behind a directory of mode 0750 that
    // `nobody` may not enter, so that looking for the file fails for real.
    let env = TestEnv::new("UTC");
    let xdg = env.dir.join("xdg");
    let guarded = xdg.join("attendance");
    std::fs::create_dir_all(&guarded).unwrap();
    chmod(&env.dir, 0o755);
    chmod(&xdg, 0o755);
    let file = guarded.join("config.toml");
    std::fs::write(&file, "namespace = \"elsewhere\"\n").unwrap();
    chmod(&file, 0o640);
    chmod(&guarded, 0o750);
    let o = run_as_nobody(&env, &[("XDG_CONFIG_HOME", &xdg)], &["config", "show"]);
    let err = one_error_line(&o);
    assert!(o.stdout.is_empty(), "nothing shown on the defaults");
    if common::rabbit::is_root() {
        assert!(
            err.contains(&format!("cannot read {}: Permission denied", file.display()))
                && err.contains(&format!(
                    "its directory {} (mode 0750) is open to group 'root'",
                    guarded.display()
                ))
                && err.contains("adduser $USER root"),
            "{err}"
        );
    }

    // Named with --config, behind the same directory: the same line.
    let o = run_as_nobody(&env, &[], &["--config", file.to_str().unwrap(), "status", "E1"]);
    let err = one_error_line(&o);
    assert!(err.contains(&format!("cannot read {}", file.display())), "{err}");

    // A file of mode 0600 in a directory anyone may enter: its owner only.
    chmod(&guarded, 0o755);
    chmod(&file, 0o600);
    let o = run_as_nobody(&env, &[("XDG_CONFIG_HOME", &xdg)], &["status", "E1"]);
    let err = one_error_line(&o);
    if common::rabbit::is_root() {
        assert!(
            err.contains("the file (mode 0600) is open to its owner 'root' only"),
            "{err}"
        );
    }
    assert_eq!(env.redis_keys(), Vec::<String>::new(), "no store touched");

    // Where it is a directory: for root too, a config place that holds no file is an error.
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let o = env
        .cmd()
        .env("XDG_CONFIG_HOME", &xdg)
        .args(["status", "E1"])
        .output()
        .unwrap();
    let err = one_error_line(&o);
    assert!(err.contains(&format!("{} is not a file", file.display())), "{err}");
    let err = status_with_config(&env, &file);
    assert!(
        err.contains("Is a directory") && err.contains("name a config file, not a directory"),
        "{err}"
    );
}

#[test]
fn every_config_error_names_where_its_value_came_from() {
    let env = TestEnv::new("UTC");
    // A file's bad value names the file.
    let f = env.file("writers.toml", "[settle]\nwriters = 9\n");
    let err = status_with_config(&env, &f);
    assert!(
        err.contains(&format!("settle.writers (file {}): invalid value '9'", f.display())),
        "{err}"
    );
    // A variable's names the variable; a flag's the variable and the flag.
    let o = env
        .cmd()
        .env("ATTENDANCE_SETTLE_WRITERS", "9")
        .args(["status", "E1"])
        .output()
        .unwrap();
    assert!(one_error_line(&o).contains("settle.writers (ATTENDANCE_SETTLE_WRITERS): invalid value"));
    let o = env
        .cmd()
        .args(["--namespace", "Bad NS", "status", "E1"])
        .output()
        .unwrap();
    let err = one_error_line(&o);
    assert!(
        err.contains("namespace (ATTENDANCE_NAMESPACE or --namespace): invalid value"),
        "{err}"
    );
    // A rule between keys names each key's source, a default included.
    let f = env.file("hours.toml", "[policy]\ncheckout_from = \"08:00\"\n");
    let err = status_with_config(&env, &f);
    assert!(
        err.contains(&format!(
            "policy.checkout_from (file {}) must be later than policy.checkin_deadline (default)",
            f.display()
        )),
        "{err}"
    );
    // A broker URL naming a user and no password can only fail at every command: refused here.
    let o = env
        .cmd()
        .env("ATTENDANCE_AMQP_URL", "amqp://attendance@127.0.0.1:5672/%2f")
        .args(["status", "E1"])
        .output()
        .unwrap();
    let err = one_error_line(&o);
    assert!(
        err.contains("amqp_url (ATTENDANCE_AMQP_URL or --amqp-url) names the user 'attendance' but no password")
            && err.contains("amqp_password_file"),
        "{err}"
    );
    assert_eq!(env.redis_keys(), Vec::<String>::new(), "no store touched");
}

#[test]
fn a_toml_slip_says_its_line_and_column_and_a_misspelt_key_the_closest_one() {
    let env = TestEnv::new("UTC");
    let f = env.file("slip.toml", "namespace = \"acme\"\n\n[policy]\ngrace_minutes = = 5\n");
    let err = status_with_config(&env, &f);
    assert!(err.contains(&format!("{} at line 4, column ", f.display())), "{err}");
    // The file's typos get the environment's "did you mean", from the same code.
    let f = env.file("typo.toml", "compny = \"Acme\"\n");
    let err = status_with_config(&env, &f);
    assert!(err.contains("unknown key 'compny'; did you mean company?"), "{err}");
    let o = env
        .cmd()
        .env("ATTENDANCE_COMPNY", "Acme")
        .args(["config", "show"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("did you mean ATTENDANCE_COMPANY?"), "{err}");
}

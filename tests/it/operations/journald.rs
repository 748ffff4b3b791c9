//! Error and warning lines carry a journald priority (`<3>`, `<4>`: sd-daemon) when stderr is
//! the journal's stream, as `JOURNAL_STREAM=DEV:INODE` says and stderr's own device and inode
//! confirm, and never otherwise.

use crate::common;

use std::os::unix::fs::MetadataExt;
use std::process::Stdio;

use common::TestEnv;

/// Run `status E999999` (unknown: an error, exit 1) with a misspelt setting (a warning), its
/// stderr a file; with `journal`, JOURNAL_STREAM names that file's device and inode, otherwise
/// another inode. Returns stderr.
fn run(env: &TestEnv, journal: bool) -> String {
    let path = env.dir.join(format!("stderr-{journal}"));
    let file = std::fs::File::create(&path).unwrap();
    let meta = file.metadata().unwrap();
    let ino = if journal { meta.ino() } else { meta.ino() + 1 };
    let status = env
        .std_cmd()
        .args(["status", "E999999"])
        .env("ATTENDANCE_POLCY_GRACE_MINUTES", "5")
        .env("JOURNAL_STREAM", format!("{}:{ino}", meta.dev()))
        .stdout(Stdio::null())
        .stderr(file)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn errors_and_warnings_carry_their_priority_only_when_stderr_is_the_journal() {
    let env = TestEnv::migrated("UTC");
    let journal = run(&env, true);
    let lines: Vec<&str> = journal.lines().collect();
    assert!(
        lines.contains(&"<4>warning: ATTENDANCE_POLCY_GRACE_MINUTES is not a setting and is ignored; the company's rules are the rulebook's: `attendance policy set policy.grace_minutes VALUE --from DATE --reason R`"),
        "{journal}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("<3>error: ") && l.contains("E999999")),
        "{journal}"
    );
    assert!(
        lines.iter().all(|l| l.starts_with("<3>") || l.starts_with("<4>")),
        "{journal}"
    );

    // The variable inherited by a process whose stderr went elsewhere: no prefix.
    let elsewhere = run(&env, false);
    assert!(elsewhere.lines().any(|l| l.starts_with("error: ")), "{elsewhere}");
    assert!(!elsewhere.contains('<'), "{elsewhere}");
}

//! Files the program writes, on real filesystems that refuse them:
//! a report written to a full disk leaves the previous report whole and no temporary file; a
//! metrics file in a read-only or missing directory costs a settle or a relay nothing but a
//! warning (exit 0: a unit whose work succeeded succeeds). The full and read-only filesystems are small tmpfs mounts of the test's own (the
//! suite runs as root), unmounted when the test ends.

use crate::common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use calamine::{open_workbook, Reader, Xlsx};
use common::TestEnv;

const TZ: &str = "Europe/Paris";
const D1: &str = "2026-11-19";
const D2: &str = "2026-11-20";

/// A tmpfs of `size` mounted on a new directory, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    fn new(at: PathBuf, options: &str) -> Mount {
        fs::create_dir_all(&at).unwrap();
        let o = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&at)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "mount -t tmpfs -o {options} {} (these tests need root): {}",
            at.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        Mount(at)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        Command::new("umount").arg("-l").arg(&self.0).status().ok();
        fs::remove_dir(&self.0).ok();
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Fill the filesystem of `dir` with a file `filler` until it is full, then give back `free`
/// bytes (whole pages): a write of more than that fails part way, as on a disk that fills up.
fn fill(dir: &Path, free: u64) {
    let path = dir.join("filler");
    let mut f = fs::File::create(&path).unwrap();
    let page = [0u8; 4096];
    while f.write(&page).is_ok_and(|n| n > 0) {}
    let len = f.metadata().unwrap().len();
    f.set_len(len.saturating_sub(free / 4096 * 4096)).unwrap();
}

/// The rows of the sheet `absent DAY`, the workbook's only sheet.
fn sheet_rows(path: &Path, day: &str) -> usize {
    let mut wb: Xlsx<_> = open_workbook(path).expect("a workbook");
    let sheet = format!("absent {day}");
    assert_eq!(wb.sheet_names(), std::slice::from_ref(&sheet));
    wb.worksheet_range(&sheet).unwrap().rows().count()
}

fn punch_both_days(env: &TestEnv) {
    for day in [D1, D2] {
        env.ok(&[
            "checkin",
            "E000002",
            "--kind",
            "in",
            "--at",
            &format!("{day}T08:50:00+01:00"),
        ]);
    }
}

#[test]
fn a_report_to_a_full_disk_leaves_the_previous_report_whole_and_no_partial_file() {
    // Regression: `report -o` wrote in place; a full disk left a CSV cut mid-line or an xlsx
    // that is not a zip under the final name, over the complete report that was there.
    let env = TestEnv::with_roster(TZ, 600, 4);
    punch_both_days(&env);
    // Yesterday's report differs from today's: one more employee came in on D1.
    env.ok(&[
        "checkin",
        "E000003",
        "--kind",
        "in",
        "--at",
        &format!("{D1}T08:55:00+01:00"),
    ]);
    env.ok(&["settle", "--date", D1]);
    env.ok(&["settle", "--date", D2]);
    let disk = Mount::new(env.dir.join("disk"), "size=256k");

    for format in ["csv", "xlsx"] {
        let report = disk.0.join(format!("absent.{format}"));
        let r = report.to_str().unwrap();
        // The previous report: yesterday's for one department, complete.
        env.ok(&[
            "report", "absent", "--date", D1, "--dept", "D001", "--format", format, "-o", r,
        ]);
        let before = fs::read(&report).unwrap();
        // Today's, for every department, is bigger than the disk's room even with the old
        // report's space given back (a write in place ran out of room mid-file).
        let today = env
            .cmd()
            .args(["report", "absent", "--date", D2, "--format", format])
            .output()
            .unwrap()
            .stdout;
        let size = today.len();
        assert!(
            size > 8192 && size > 2 * before.len(),
            "{format}: a report of {size} bytes after one of {} is too small to cut",
            before.len()
        );
        fill(&disk.0, (size - before.len()) as u64 / 2);

        let err = env.fails(&["report", "absent", "--date", D2, "--format", format, "-o", r], 5);
        assert!(
            err.starts_with("error: writing ") && err.contains(r) && err.contains("No space left on device"),
            "{format}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        let after = fs::read(&report).unwrap();
        assert!(
            after == before,
            "{format}: the previous report, untouched ({} bytes now, {} before)",
            after.len(),
            before.len()
        );
        let mut expected = vec!["filler".to_string(), format!("absent.{format}")];
        expected.sort();
        assert_eq!(names(&disk.0), expected, "{format}: no partial or temporary file left");
        if format == "xlsx" {
            let csv = env.ok(&["report", "absent", "--date", D1, "--dept", "D001", "--format", "csv"]);
            assert_eq!(sheet_rows(&report, D1), csv.lines().count(), "still the whole workbook");
        }

        // With room again, the new report replaces the old one whole.
        fs::remove_file(disk.0.join("filler")).unwrap();
        env.ok(&["report", "absent", "--date", D2, "--format", format, "-o", r]);
        match format {
            "csv" => assert!(fs::read(&report).unwrap() == today, "the new report, whole"),
            _ => assert_eq!(sheet_rows(&report, D2), 600, "header and 599 absent"),
        }
        assert_eq!(names(&disk.0).len(), 1, "{format}: only the report");
        fs::remove_file(&report).unwrap();
    }
}

#[test]
fn a_settle_whose_metrics_file_cannot_be_written_warns_and_exits_0_with_its_rows_written() {
    // Regressions: with --metrics-file in a read-only directory, settle did the whole day and
    // then exited 5 printing neither its summary nor --json; then it exited 4, so the nightly
    // unit failed every night on a machine without the metrics directory.
    let env = TestEnv::with_roster(TZ, 12, 2);
    punch_both_days(&env);
    let ro = Mount::new(env.dir.join("ro"), "ro,size=64k");
    let prom = ro.0.join("settle.prom");
    let p = prom.to_str().unwrap();

    // As the unit runs it: -q, and the warning still reaches stderr (the journal).
    let o = env.run(&["-q", "settle", "--date", D1, "--json", "--metrics-file", p]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("--json printed whole");
    assert_eq!(json["rows_written"], 12, "{json}");
    let said: Vec<&str> = err.lines().filter(|l| l.contains("metrics-file")).collect();
    assert_eq!(said.len(), 1, "one line: {err}");
    assert!(
        said[0].starts_with("warning: --metrics-file ")
            && said[0].contains(p)
            && said[0].contains("Read-only file system"),
        "{err}"
    );
    assert!(!err.contains("error:"), "{err}");
    assert_eq!(
        env.count(&format!("attendance WHERE work_date = '{D1}'")),
        12,
        "the rows are in MySQL"
    );

    // In text: the day's summary line, then the warning; a missing directory alike.
    let missing = env.dir.join("no-such-dir").join("settle.prom");
    for (day, path) in [(D2, p), ("2026-11-21", missing.to_str().unwrap())] {
        let o = env.run(&["settle", "--date", day, "--metrics-file", path]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        let lines: Vec<&str> = err
            .trim()
            .lines()
            .filter(|l| !l.starts_with("warning: Redis"))
            .collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(lines[0].starts_with(&format!("settled {day}")), "{err}");
        assert!(
            lines[1].starts_with("warning: --metrics-file") && lines[1].contains(path),
            "{err}"
        );
    }
    assert_eq!(env.count(&format!("attendance WHERE work_date = '{D2}'")), 12);
    assert_eq!(names(&ro.0), Vec::<String>::new(), "nothing written there");
    assert!(!missing.parent().unwrap().exists());
}

#[test]
fn a_relay_whose_metrics_file_cannot_be_written_still_drains_warns_and_exits_0() {
    let env = TestEnv::with_roster(TZ, 6, 1);
    // A punch while the broker is unreachable: its event waits in the outbox for the relay.
    env.cmd()
        .env("ATTENDANCE_AMQP_URL", common::CLOSED_BROKER)
        .args(["checkin", "E000002", "--kind", "in"])
        .assert()
        .success();
    let ro = Mount::new(env.dir.join("ro"), "ro,size=64k");
    let prom = ro.0.join("relay.prom");
    let p = prom.to_str().unwrap();
    let o = env.run(&["-q", "relay", "--json", "--metrics-file", p]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("--json printed whole");
    assert_eq!(json["sent"], 1, "{json}");
    assert_eq!(env.outbox_events(), 0, "the outbox is empty in Redis");
    let last = err.trim().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("warning: --metrics-file") && last.contains(p) && last.contains("Read-only file system"),
        "{err}"
    );
    assert_eq!(err.matches("metrics-file").count(), 1, "{err}");
}

//! `attendance man`: the man pages, generated from the same clap definitions as `--help` (so
//! they never drift from the flags), with the sections an admin looks for: ENVIRONMENT (every
//! setting's variable, from the key table), FILES, EXIT STATUS, EXAMPLES (each one parsed by the
//! same definitions in a test, so none goes stale) and SEE ALSO. Every page they name is one
//! that `man --dir` writes; none points at a file that is not installed.

use anyhow::{Context, Result};
use clap::CommandFactory;
use clap_mangen::roff::{bold, italic, roman, Roff};

use crate::cli::{Cli, ManArgs};

pub(crate) fn man(args: &ManArgs) -> Result<()> {
    // No `help` subcommand in the pages: it has no page of its own to point to.
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            write_pages(cmd, None, dir)
        }
        None => Ok(crate::output::bytes(&page(cmd, None)?)?),
    }
}

/// A page for the command and each of its subcommands, as `clap_mangen::generate_to` names
/// them (`attendance-report-day.1`), each written whole (`crate::files`).
fn write_pages(cmd: clap::Command, parent: Option<&str>, dir: &std::path::Path) -> Result<()> {
    let name = page_name(&cmd);
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        write_pages(sub, Some(&name), dir)?;
    }
    crate::files::write(&dir.join(format!("{name}.1")), &page(cmd, parent)?)
}

/// `attendance-report-day`: the page's name, as clap_mangen gives it.
fn page_name(cmd: &clap::Command) -> String {
    cmd.get_display_name().unwrap_or(cmd.get_name()).to_string()
}

/// One page: clap_mangen's sections (its EXTRA, the exit codes in one line, gives way to
/// EXIT STATUS), then ours. `parent`: the page of the command above, `None` for the top one.
fn page(cmd: clap::Command, parent: Option<&str>) -> Result<Vec<u8>> {
    let name = page_name(&cmd);
    let has_args = cmd.get_arguments().any(|a| !a.is_hide_set());
    let (has_subs, has_version) = (cmd.has_subcommands(), cmd.get_version().is_some());
    let man = clap_mangen::Man::new(cmd);
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if has_args {
        man.render_options_section(&mut out)?;
    }
    if has_subs {
        man.render_subcommands_section(&mut out)?;
    }
    let mut r = Roff::new();
    match parent {
        None => {
            environment(&mut r);
            files(&mut r);
        }
        Some(_) => {
            r.control("SH", ["ENVIRONMENT"]);
            r.text([
                roman("Every setting has its "),
                bold("ATTENDANCE_*"),
                roman(" variable, and "),
                bold("ATTENDANCE_CONFIG"),
                roman(" names the config file: see "),
                bold("attendance"),
                roman("(1)."),
            ]);
            r.control("SH", ["FILES"]);
            r.text([
                roman("The config files every command reads: see "),
                bold("attendance"),
                roman("(1)."),
            ]);
        }
    }
    exit_status(&mut r);
    examples_section(&mut r, &name);
    r.control("SH", ["SEE ALSO"]);
    match parent {
        None => r.text([
            bold("attendance config show"),
            roman(" prints the configuration in force and where each value came from; each command has its page, "),
            bold("attendance-COMMAND"),
            roman("(1), listed above."),
        ]),
        Some("attendance") => r.text([bold("attendance"), roman("(1)")]),
        Some(p) => r.text([bold(p), roman("(1), "), bold("attendance"), roman("(1)")]),
    };
    out.extend(r.render().into_bytes());
    if has_version {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}

/// One `.TP` item: a term in bold, then its text.
fn item(r: &mut Roff, term: &str, text: &str) {
    r.control("TP", []);
    r.text([bold(term)]);
    r.text([roman(text)]);
}

fn environment(r: &mut Roff) {
    r.control("SH", ["ENVIRONMENT"]);
    r.text([roman(
        "Later wins: defaults, then the config file, then these variables, then the flags. A bad value is a \
         one-line error naming its key and variable (exit 2); an ATTENDANCE_* variable that no setting reads \
         is a warning naming the closest one.",
    )]);
    item(r, "ATTENDANCE_CONFIG", "The config file to read, as --config.");
    for (var, key) in crate::config::variables() {
        item(r, &var, &format!("The setting {key} (as in the config file)."));
    }
    item(
        r,
        "XDG_CONFIG_HOME",
        "Where the user's config file is looked for (HOME/.config when unset): see FILES.",
    );
    item(
        r,
        "SSL_CERT_FILE",
        "A PEM file of the certificate authorities trusted for TLS to the stores, instead of the system's.",
    );
}

fn files(r: &mut Roff) {
    r.control("SH", ["FILES"]);
    r.text([roman(
        "When neither --config nor ATTENDANCE_CONFIG names one, the first of these that exists is read:",
    )]);
    r.control("TP", []);
    r.text([italic("$XDG_CONFIG_HOME/attendance/config.toml")]);
    r.text([roman(
        "The user's config file (~/.config/attendance/config.toml when XDG_CONFIG_HOME is unset).",
    )]);
    r.control("TP", []);
    r.text([italic("/etc/attendance/config.toml")]);
    r.text([roman("The machine's config file.")]);
    r.text([roman(
        "A config file that group or others may write, or read while it holds a password, is refused (exit 2); \
         so are the files its *_password_file, signing.key_file and signing.keyring_file keys name when \
         others may read them: chmod 600.",
    )]);
}

fn exit_status(r: &mut Roff) {
    r.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in [
        ("0", "Done (a --metrics-file that could not be written is a warning on stderr, not a failure)."),
        ("1", "Refused by a rule (an unknown employee, a punch out of its window, a correction without authority, a MySQL account without the privilege)."),
        ("2", "Bad usage or bad input: a malformed date, time or file, a bad config (named with its file, variable or flag), a config file that exists but cannot be read, a destructive command without --yes; nothing changed."),
        ("3", "A service (Redis, MySQL, RabbitMQ) unreachable, failing or silent past its timeout; a server certificate refused; a broker login refused."),
        ("4", "Done, but some items were refused or failed (listed on stderr), or doctor found warnings only."),
        ("5", "An internal or I/O failure: a file that cannot be written, a value read back from a store that does not parse."),
        ("6", "Settle refused a day that looks lost in Redis: run attendance recover first."),
        ("7", "A punch was held for review, not applied: back-dated past policy.replay_window_minutes by a key that may not replay; attendance review approve ID applies it."),
    ] {
        item(r, code, meaning);
    }
}

/// Command lines shown in the EXAMPLES section, each with what it does: a page shows those of
/// its own command and of the commands under it (`attendance-org` shows `org import`'s), the
/// top page the first of each.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "attendance migrate",
        "Create the database if missing and apply the migrations.",
    ),
    (
        "attendance org generate --employees 2000 --departments 10 -o roster.csv",
        "Write a realistic roster.",
    ),
    (
        "attendance org import roster.csv --full --dry-run",
        "Say what importing the whole roster would change.",
    ),
    (
        "attendance org list --dept D042",
        "The employees of a department employed today.",
    ),
    (
        "attendance org export -o roster.csv",
        "The whole roster, as org import reads it back.",
    ),
    (
        "attendance init-day --date 2026-11-30",
        "Lay out every department's board for a day.",
    ),
    (
        "attendance checkin E000123 --kind in --at 08:30",
        "Record a check-in at 08:30 today.",
    ),
    ("attendance checkin --file punches.csv", "Record a file of punches."),
    ("attendance status E000123", "An employee's own day."),
    (
        "attendance watch-dept D042",
        "A supervisor's live view of a department.",
    ),
    (
        "attendance relay --follow",
        "Send pending notifications, then keep sending.",
    ),
    (
        "attendance queues declare",
        "Declare and bound every department's queue.",
    ),
    ("attendance queues purge --yes", "Empty the namespace's queues."),
    (
        "attendance queues delete --yes",
        "Delete the namespace's queues and exchanges.",
    ),
    ("attendance dlq list", "The parking queue of failed notifications."),
    (
        "attendance dlq replay --all",
        "Put every parked notification back on its queue.",
    ),
    ("attendance dlq purge --all --yes", "Empty the parking queue."),
    (
        "attendance settle",
        "Write yesterday, and earlier days left in Redis, to MySQL.",
    ),
    ("attendance settle --date 2026-11-30", "Settle one day."),
    (
        "attendance recover --date 2026-11-30",
        "Rebuild a day's boards from the broker's journal.",
    ),
    (
        "attendance policy show --date 2026-11-30",
        "The company's rules in force on a day, each since when.",
    ),
    (
        "attendance policy set policy.grace_minutes 10 --from 2027-01-01 --reason \"union agreement\"",
        "A new version of a rule from a date on (the owner's account).",
    ),
    ("attendance policy history", "Every version of the rules ever set."),
    ("attendance calendar set 2026-12-25 holiday", "Make a day a holiday."),
    (
        "attendance calendar import calendar.csv --dry-run",
        "Say what a calendar file would change.",
    ),
    (
        "attendance calendar list",
        "The calendar's holidays and extra work days.",
    ),
    (
        "attendance calendar unset 2026-12-25",
        "Give a day back to the policy's week.",
    ),
    (
        "attendance shifts import shifts.csv --dry-run",
        "Say what a shifts file would change.",
    ),
    (
        "attendance shifts assign assign.csv",
        "Assign shifts to departments and employees.",
    ),
    ("attendance shifts list", "The shifts and their assignments."),
    (
        "attendance shifts which E000123 --date 2026-12-15",
        "Which shift applies to an employee on a day, and why.",
    ),
    (
        "attendance leave add E000123 2026-12-21 2026-12-24",
        "Approved leave for four days.",
    ),
    ("attendance leave list", "Approved leave."),
    ("attendance leave cancel 12", "Cancel a leave by its id."),
    (
        "attendance keys generate kiosk-2 --out /etc/attendance/kiosk-2.key",
        "Make a kiosk's Ed25519 key: the private key into a new 0600 file, the public key printed.",
    ),
    (
        "attendance keys add kiosk-2 --public-key kiosk-2.pub --replay",
        "Put a kiosk's public key in the registry, allowed to replay offline punches.",
    ),
    (
        "attendance keys revoke kiosk-1 --at 2026-12-07T14:00:00Z --reason \"laptop stolen\"",
        "Refuse a key's events recorded from that instant on.",
    ),
    ("attendance keys list", "The key registry."),
    (
        "attendance period close 2026-11",
        "Close November for payroll: its days no longer change.",
    ),
    (
        "attendance period reopen 2026-11 --reason \"late sick note\"",
        "Open a closed month again, audited.",
    ),
    (
        "attendance overtime approve --employee E000123 --date 2026-11-27 --reason \"stock count\"",
        "Approve a day's overtime (with policy.overtime_needs_approval on): payroll counts it.",
    ),
    (
        "attendance overtime reject --dept D042 --date 2026-11-27 --reason \"not asked for\"",
        "Reject the overtime of a department's day: it counts 0.",
    ),
    (
        "attendance correct E000123 --date 2026-11-27 --out 18:15 --reason \"kiosk down\"",
        "Set a settled day's check-out, audited.",
    ),
    (
        "attendance punch void E000123 --at 07:05 --reason \"a colleague's badge\"",
        "Take a wrong punch off its live day.",
    ),
    (
        "attendance review list --date 2026-11-30",
        "Punches held for review on a day.",
    ),
    (
        "attendance review approve 12 --reason \"kiosk 3 offline\"",
        "Apply a held punch.",
    ),
    (
        "attendance review reject 12 --reason \"not on site\"",
        "Refuse a held punch.",
    ),
    (
        "attendance report day --date 2026-11-30",
        "A day, a line per department.",
    ),
    (
        "attendance report dept D042 --from 2026-11-01 --to 2026-11-30 --format xlsx -o D042.xlsx",
        "A department's month as a spreadsheet.",
    ),
    (
        "attendance report employee E000123 --from 2026-11-01 --to 2026-11-30",
        "An employee's days.",
    ),
    (
        "attendance report absent --date 2026-11-30 --dept D042",
        "Who was absent.",
    ),
    (
        "attendance report month --month 2026-11 --format xlsx -o november.xlsx",
        "The month sheet.",
    ),
    (
        "attendance report timesheet --employee E000123 --month 2026-11 --format xlsx -o E000123-november.xlsx",
        "An employee's month, a row per day, printable.",
    ),
    (
        "attendance report payroll --from 2026-11-01 --to 2026-11-30 --csv",
        "A line per employee for payroll.",
    ),
    (
        "attendance report corrections --from 2026-11-01 --to 2026-11-30",
        "Who corrected what.",
    ),
    (
        "attendance report punches --employee E000123 --from 2026-11-01 --to 2026-11-30",
        "Every punch, with where it came from.",
    ),
    ("attendance report now --counts", "Who is in right now, per department."),
    ("attendance report runs", "Settle runs, newest first."),
    (
        "attendance archive --before 2025-01-01 --out /srv/archive --drop",
        "Old days to CSV files, and out of MySQL.",
    ),
    (
        "attendance db partition --from 2026-01 --months 24",
        "Monthly partitions of the attendance table.",
    ),
    (
        "attendance simulate --phase morning -o morning.csv",
        "A realistic morning of punches.",
    ),
    (
        "attendance metrics -o /var/lib/prometheus/node-exporter/attendance.prom",
        "The day's figures for node exporter.",
    ),
    (
        "attendance config show",
        "The configuration in force, with where each value came from.",
    ),
    (
        "attendance doctor --role supervisor",
        "Check the installation, and the grants a supervisor needs.",
    ),
    ("attendance completions bash", "Bash completions."),
    ("attendance man --dir man1", "Write every man page."),
];

/// The examples a page shows: its command's and those of the commands under it; the top
/// page, the first of each command.
fn examples_of(page: &str) -> Vec<(&'static str, &'static str)> {
    let mut seen = std::collections::HashSet::new();
    EXAMPLES
        .iter()
        .filter(|(line, _)| {
            let words: Vec<&str> = line.split(' ').take_while(|w| !w.starts_with('-')).collect();
            if page == "attendance" {
                return seen.insert(words.get(1).copied().unwrap_or_default());
            }
            // The page of `attendance org import` is attendance-org-import; its prefixes' pages show it.
            (1..=words.len()).any(|n| words[..n].join("-") == page)
        })
        .copied()
        .collect()
}

fn examples_section(r: &mut Roff, page: &str) {
    let shown = examples_of(page);
    if shown.is_empty() {
        return;
    }
    r.control("SH", ["EXAMPLES"]);
    for (line, what) in shown {
        item(r, line, what);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// Split a command line as a shell would for these examples: words, and "quoted words".
    fn words(line: &str) -> Vec<String> {
        let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        for c in line.chars() {
            match c {
                '"' => quoted = !quoted,
                ' ' if !quoted => out.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        out.push(cur);
        out
    }

    #[test]
    fn every_example_parses_and_every_page_has_some() {
        for (line, _) in EXAMPLES {
            if let Err(e) = Cli::try_parse_from(words(line)) {
                panic!("{line}: {e}");
            }
        }
        fn walk(cmd: &clap::Command, pages: &mut Vec<String>) {
            pages.push(page_name(cmd));
            for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
                walk(sub, pages);
            }
        }
        let mut cmd = Cli::command().disable_help_subcommand(true);
        cmd.build();
        let mut pages = Vec::new();
        walk(&cmd, &mut pages);
        let bare: Vec<&String> = pages.iter().filter(|p| examples_of(p).is_empty()).collect();
        assert!(bare.is_empty(), "pages without EXAMPLES: {bare:?}");
        assert!(examples_of("attendance-org").len() >= 4);
        assert_eq!(examples_of("attendance-org-import").len(), 1);
    }
}

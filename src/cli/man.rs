//! `attendance man`: the man pages, generated from the same clap definitions as `--help` (so
//! they never drift from the flags), with the sections an admin looks for: ENVIRONMENT (every
//! setting's variable, from the key table), FILES, EXIT STATUS and SEE ALSO. Every page they
//! name is one that `man --dir` writes; none points at a file that is not installed.

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
    ] {
        item(r, code, meaning);
    }
}

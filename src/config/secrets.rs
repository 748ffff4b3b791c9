//! Secrets hygiene, as ssh keeps it: a config file that others may rewrite, or read while it
//! holds a password, is refused; so is a password file others may read. Passwords may come from
//! files named in the config (`*_password_file`), so that none has to be on a command line, in
//! the environment of every process, or in a world-readable file.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::Config;
use crate::error::{redact, Error};

/// The files the stores' passwords are read from; `None`: the URL's own password, if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PasswordFiles {
    pub redis: Option<PathBuf>,
    pub mysql: Option<PathBuf>,
    pub report_mysql: Option<PathBuf>,
    pub amqp: Option<PathBuf>,
}

/// Whether a URL (or a comma-separated list of them) carries a password: the one place that
/// finds passwords to hide them finds them here too.
pub(crate) fn has_password(url: &str) -> bool {
    redact(url) != url
}

/// Refuse a file the program trusts that group or others may write, and one holding a secret
/// that group or others may read. `what` names the file in the one line.
pub(crate) fn check_private(path: &Path, what: &str, holds_secret: bool) -> Result<(), Error> {
    let meta =
        std::fs::metadata(path).map_err(|e| Error::input(format!("{what}: cannot read {}: {e}", path.display())))?;
    // A device (`--config /dev/null`: no config at all) has no content anyone could plant.
    if std::os::unix::fs::FileTypeExt::is_char_device(&meta.file_type()) {
        return Ok(());
    }
    let mode = meta.permissions().mode() & 0o777;
    let fix = format!("run: chmod go-rwx {}", path.display());
    if mode & 0o022 != 0 {
        return Err(Error::input(format!(
            "{what}: {} can be written by group or others (mode {mode:04o}), so anyone could change where this program connects; {fix}",
            path.display()
        )));
    }
    if holds_secret && mode & 0o044 != 0 {
        return Err(Error::input(format!(
            "{what}: {} holds a password and can be read by group or others (mode {mode:04o}); {fix}",
            path.display()
        )));
    }
    Ok(())
}

impl PasswordFiles {
    /// Put each file's password into its URL(s). A URL that already carries one is refused
    /// (two sources for one password: which one is meant?).
    pub(crate) fn apply(&self, cfg: &mut Config) -> Result<(), Error> {
        if let Some(f) = &self.redis {
            cfg.redis_url = with_password(&cfg.redis_url, &read(f, "redis_password_file")?, "redis_url", false)?;
        }
        if let Some(f) = &self.mysql {
            cfg.mysql_url = with_password(&cfg.mysql_url, &read(f, "mysql_password_file")?, "mysql_url", true)?;
        }
        if let Some(f) = &self.report_mysql {
            let key = "report_mysql_url";
            let url = cfg
                .report_mysql_url
                .as_deref()
                .ok_or_else(|| Error::input(format!("config: report_mysql_password_file is set but {key} is not")))?;
            cfg.report_mysql_url = Some(with_password(url, &read(f, "report_mysql_password_file")?, key, true)?);
        }
        if let Some(f) = &self.amqp {
            let pw = read(f, "amqp_password_file")?;
            let urls: Result<Vec<String>, Error> = cfg
                .amqp_urls()
                .into_iter()
                .map(|u| with_password(u, &pw, "amqp_url", true))
                .collect();
            cfg.amqp_url = urls?.join(",");
        }
        Ok(())
    }
}

/// A password file's first line, refused when others may read it or when it is empty.
fn read(path: &Path, key: &str) -> Result<String, Error> {
    let what = format!("config: {key}");
    check_private(path, &what, true)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(format!("{what}: cannot read {}: {e}", path.display())))?;
    let pw = text.lines().next().unwrap_or("").to_string();
    if pw.is_empty() || pw.chars().any(char::is_control) {
        return Err(Error::input(format!(
            "{what}: {} must hold the password on its first line, with no control characters",
            path.display()
        )));
    }
    Ok(pw)
}

/// `url` with `password` in its user information, percent-encoded. A URL that has a password
/// already is refused; so is one with no user where the store needs one (`needs_user`).
fn with_password(url: &str, password: &str, key: &str, needs_user: bool) -> Result<String, Error> {
    let refuse = |why: &str| Error::input(format!("config: {key} {why}"));
    if has_password(url) {
        return Err(refuse(
            "has a password of its own and a password file is set: give it once",
        ));
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| refuse("is not a URL (scheme://host...)"))?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (user, host) = match rest[..end].rsplit_once('@') {
        Some((user, _)) => (user, &rest[user.len() + 1..]),
        None => ("", rest),
    };
    if needs_user && user.is_empty() {
        return Err(refuse("needs a user name (scheme://user@host) for its password file"));
    }
    let encoded = percent_encoding::utf8_percent_encode(password, USERINFO);
    Ok(format!("{scheme}://{user}:{encoded}@{host}"))
}

/// What a password may not hold raw in a URL's user information (RFC 3986's userinfo, plus the
/// separators every URL parser here cuts at).
const USERINFO: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_goes_into_the_url_encoded_and_only_once() {
        let w = |u, p, user| with_password(u, p, "k", user);
        assert_eq!(
            w("mysql://att@db:3306/attendance", "p@ss/w:rd", true).unwrap(),
            "mysql://att:p%40ss%2Fw%3Ard@db:3306/attendance"
        );
        assert_eq!(w("redis://h:6379/", "s", false).unwrap(), "redis://:s@h:6379/");
        assert_eq!(
            w("redis+cluster://u@h1:7000,h2:7001", "s", false).unwrap(),
            "redis+cluster://u:s@h1:7000,h2:7001"
        );
        assert!(w("mysql://db:3306/x", "s", true).is_err(), "no user");
        assert!(w("amqp://u:p@h/%2f", "s", true).is_err(), "two passwords");
        assert!(w("nonsense", "s", false).is_err());
    }
}

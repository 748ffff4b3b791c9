//! The config file: where it is found when none is named, read with a bound, its keys checked
//! one by one through the key table, and refused when others may rewrite it or read its
//! passwords (config/secrets.rs).

use std::path::{Path, PathBuf};

use super::settable::{self, Raw};
use super::{secrets, Config};
use crate::error::Error;

impl Config {
    /// The TOML file: top-level keys and `[section]` tables, each key through [`settable::KEYS`];
    /// an unknown key is an error, so a typo never passes silently.
    pub(super) fn apply_file(&mut self, path: &Path) -> Result<(), Error> {
        let text = read_bounded(path)?;
        let origin = path.display().to_string();
        let entries = entries(&text, &origin)?;
        let holds_secret = entries
            .iter()
            .any(|(name, v)| name.ends_with("url") && secrets::has_password(&v.to_string()));
        secrets::check_private(path, "config", holds_secret)?;
        self.apply_entries(entries, &origin)
    }

    /// Every `section.key` of a file, each through [`settable::KEYS`]; `origin` names the file.
    fn apply_entries(&mut self, entries: Vec<(String, toml::Value)>, origin: &str) -> Result<(), Error> {
        let source = format!("file {origin}");
        for (name, value) in entries {
            let key = settable::find(&name).ok_or_else(|| {
                Error::input(format!(
                    "config: {origin}: unknown key '{name}'{}",
                    super::environment::did_you_mean(&name, settable::KEYS.iter().map(|k| k.name.to_string()))
                ))
            })?;
            key.apply(self, &Raw::Toml(value), &source)?;
        }
        Ok(())
    }

    /// The configuration a config file's text gives over the defaults, checked as a file's is
    /// (no environment, no password files). For the fuzz target of the config parser.
    pub fn from_toml(text: &str) -> Result<Config, Error> {
        let mut c = Config::default();
        c.apply_entries(entries(text, "text")?, "text")?;
        c.validate()?;
        Ok(c)
    }
}

/// A config file's keys as `section.key` and their values; `origin` names the file in errors.
pub(super) fn entries(text: &str, origin: &str) -> Result<Vec<(String, toml::Value)>, Error> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e.span().map_or(String::new(), |span| {
            let (line, column) = line_and_column(text, span.start);
            format!(" at line {line}, column {column}")
        });
        Error::input(format!(
            "config: {origin}{at}: {}",
            e.message().trim().replace('\n', " ")
        ))
    })?;
    let mut entries = Vec::new();
    for (name, value) in table {
        match value {
            toml::Value::Table(section) => {
                entries.extend(section.into_iter().map(|(k, v)| (format!("{name}.{k}"), v)));
            }
            v => entries.push((name, v)),
        }
    }
    Ok(entries)
}

/// The 1-based line and column (in characters) of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(at.min(text.len()))];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Where a config file is looked for when none is named, as admins expect: the user's
/// (`$XDG_CONFIG_HOME/attendance/config.toml`, `~/.config/...` without it), then the machine's
/// (`/etc/attendance/config.toml`). The first that exists is read; none: the defaults. One
/// that may exist but cannot be looked at (a directory on the way this user may not enter, as
/// `/etc/attendance` is to users outside its group), or that is not a file, is an error naming
/// it: running on the defaults instead would point every command at the wrong stores.
pub(super) fn default_file(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<Option<PathBuf>, Error> {
    let user = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|dir| dir.join("attendance").join("config.toml"));
    for path in user.into_iter().chain([PathBuf::from("/etc/attendance/config.toml")]) {
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() || std::os::unix::fs::FileTypeExt::is_char_device(&m.file_type()) => {
                return Ok(Some(path))
            }
            Ok(_) => {
                return Err(Error::input(format!(
                    "config: {} is not a file: remove it, or name a config file with --config",
                    path.display()
                )))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // A path through a file (ENOTDIR): nothing there either.
            Err(e) if e.raw_os_error() == Some(20) => {}
            Err(e) => return Err(cannot_read(&path, &e)),
        }
    }
    Ok(None)
}

/// The most a config file may hold: a real one is a few KiB; `--config /dev/zero` must not be
/// read for a gigabyte first.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The config file's text, refused past [`MAX_CONFIG_BYTES`] without reading further.
pub(super) fn read_bounded(path: &Path) -> Result<String, Error> {
    use std::io::Read;
    let cannot = |e: std::io::Error| cannot_read(path, &e);
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(cannot)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(Error::input(format!(
            "config: {} is larger than 1 MiB: not a config file",
            path.display()
        )));
    }
    Ok(text)
}

/// A config file that exists (or may) but cannot be read, with what to do: for a permission
/// refused, who may read it (the file's group or owner, or those of the first directory on the
/// way that this user may not enter), so an admin knows whom to add where.
pub(super) fn cannot_read(path: &Path, e: &std::io::Error) -> Error {
    let fix = if e.kind() == std::io::ErrorKind::PermissionDenied {
        match who_may_read(path) {
            Some(who) => format!("; {who}, or name another file with --config"),
            None => "; run this as a user who may read it, or name another file with --config".to_string(),
        }
    } else if e.raw_os_error() == Some(21) {
        ": name a config file, not a directory".to_string()
    } else {
        String::new()
    };
    Error::input(format!("config: cannot read {}: {e}{fix}", path.display()))
}

/// Who may read `path`, in words: the file itself when it can be looked at, else the nearest
/// directory above it that can (the one that bars the way, as `/etc/attendance` does).
fn who_may_read(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let (what, meta, group_bits) = match std::fs::metadata(path) {
        Ok(m) => ("the file".to_string(), m, 0o040),
        Err(_) => path.ancestors().skip(1).find_map(|dir| {
            let m = std::fs::metadata(dir).ok()?;
            Some((format!("its directory {}", dir.display()), m, 0o050))
        })?,
    };
    let mode = meta.mode() & 0o7777;
    let group = name_of("/etc/group", meta.gid());
    Some(if mode & group_bits == group_bits {
        format!(
            "{what} (mode {mode:04o}) is open to group '{group}': run this as a member of that group \
             (e.g. `sudo adduser $USER {group}`, then log in again)"
        )
    } else {
        format!(
            "{what} (mode {mode:04o}) is open to its owner '{}' only: run this as that user",
            name_of("/etc/passwd", meta.uid())
        )
    })
}

/// A user's or group's name from `/etc/passwd` or `/etc/group` (the id is the third field of
/// both), or its number when it has none there.
fn name_of(table: &str, id: u32) -> String {
    std::fs::read_to_string(table)
        .ok()
        .and_then(|rows| {
            rows.lines().find_map(|l| {
                let mut f = l.split(':');
                let name = f.next()?;
                (f.nth(1)?.parse::<u32>().ok()? == id).then(|| name.to_string())
            })
        })
        .unwrap_or_else(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_file_is_found_in_the_users_then_the_machines_place() {
        let home = std::env::temp_dir().join(format!("att-home-{}", uuid::Uuid::new_v4()));
        let xdg = home.join("xdg");
        std::fs::create_dir_all(xdg.join("attendance")).unwrap();
        std::fs::create_dir_all(home.join(".config/attendance")).unwrap();
        let env = |xdg_set: bool| {
            let (home, xdg) = (home.clone(), xdg.clone());
            move |name: &str| match name {
                "HOME" => Some(home.clone().into_os_string()),
                "XDG_CONFIG_HOME" if xdg_set => Some(xdg.clone().into_os_string()),
                _ => None,
            }
        };
        let machine = Path::new("/etc/attendance/config.toml");
        let none = machine.is_file().then(|| machine.to_path_buf());
        assert_eq!(default_file(env(true)).unwrap(), none, "no file of the user's yet");
        std::fs::write(home.join(".config/attendance/config.toml"), "").unwrap();
        assert_eq!(
            default_file(env(false)).unwrap(),
            Some(home.join(".config/attendance/config.toml"))
        );
        assert_eq!(
            default_file(env(true)).unwrap(),
            none,
            "XDG_CONFIG_HOME replaces ~/.config"
        );
        std::fs::write(xdg.join("attendance/config.toml"), "").unwrap();
        assert_eq!(
            default_file(env(true)).unwrap(),
            Some(xdg.join("attendance/config.toml"))
        );
        // One that is there but is no file is named, not skipped.
        std::fs::remove_file(xdg.join("attendance/config.toml")).unwrap();
        std::fs::create_dir(xdg.join("attendance/config.toml")).unwrap();
        let e = default_file(env(true)).unwrap_err().to_string();
        assert!(e.contains("config.toml is not a file"), "{e}");
        std::fs::remove_dir_all(home).ok();
    }

    #[test]
    fn a_syntax_error_says_its_line_and_column() {
        let e = entries("namespace = \"a\"\n[policy]\ngrace_minutes = = 3\n", "/x.toml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("config: /x.toml at line 3, column "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        assert_eq!(line_and_column("ab\ncdé\nf", 7), (2, 4));
        assert_eq!(line_and_column("", 5), (1, 1));
    }

    #[test]
    fn an_unknown_key_in_the_file_is_named_with_the_closest_key() {
        let e = crate::config::Config::from_toml("compny = \"Acme\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown key 'compny'; did you mean company?"), "{e}");
        let e = crate::config::Config::from_toml("[policy]\ngrace_minute = 3\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean policy.grace_minutes?"), "{e}");
    }

    #[test]
    fn a_permission_refused_names_who_may_read() {
        // Whatever this test runs as: the error for a refused read, through its own function.
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let dir = std::env::temp_dir().join(format!("att-perm-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.toml");
        std::fs::write(&file, "").unwrap();
        let refused = std::io::Error::from_raw_os_error(13);
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let group = name_of("/etc/group", std::fs::metadata(&file).unwrap().gid());
        let e = cannot_read(&file, &refused).to_string();
        assert!(
            e.starts_with(&format!("config: cannot read {}: Permission denied", file.display()))
                && e.contains(&format!("the file (mode 0640) is open to group '{group}'"))
                && e.contains(&format!("adduser $USER {group}")),
            "{e}"
        );
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = cannot_read(&file, &refused).to_string();
        assert!(e.contains("(mode 0600) is open to its owner '"), "{e}");
        assert_eq!(name_of("/etc/passwd", 0), "root");
        std::fs::remove_dir_all(dir).ok();
    }
}

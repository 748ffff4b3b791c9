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
        for (name, value) in entries {
            let key =
                settable::find(&name).ok_or_else(|| Error::input(format!("config: {origin}: unknown key '{name}'")))?;
            key.apply(self, &Raw::Toml(value), "")?;
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
    let table: toml::Table = toml::from_str(text)
        .map_err(|e| Error::input(format!("config: {origin}: {}", e.message().replace('\n', " "))))?;
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

/// Where a config file is looked for when none is named, as admins expect: the user's
/// (`$XDG_CONFIG_HOME/attendance/config.toml`, `~/.config/...` without it), then the machine's
/// (`/etc/attendance/config.toml`). The first that exists is read; none: the defaults.
pub(super) fn default_file(env: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let user = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|dir| dir.join("attendance").join("config.toml"));
    user.into_iter()
        .chain([PathBuf::from("/etc/attendance/config.toml")])
        .find(|p| p.is_file())
}

/// The most a config file may hold: a real one is a few KiB; `--config /dev/zero` must not be
/// read for a gigabyte first.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The config file's text, refused past [`MAX_CONFIG_BYTES`] without reading further.
pub(super) fn read_bounded(path: &Path) -> Result<String, Error> {
    use std::io::Read;
    let cannot = |e: std::io::Error| Error::input(format!("config: cannot read {}: {e}", path.display()));
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
        assert_eq!(default_file(env(true)), none, "no file of the user's yet");
        std::fs::write(home.join(".config/attendance/config.toml"), "").unwrap();
        assert_eq!(
            default_file(env(false)),
            Some(home.join(".config/attendance/config.toml"))
        );
        assert_eq!(default_file(env(true)), none, "XDG_CONFIG_HOME replaces ~/.config");
        std::fs::write(xdg.join("attendance/config.toml"), "").unwrap();
        assert_eq!(default_file(env(true)), Some(xdg.join("attendance/config.toml")));
        std::fs::remove_dir_all(home).ok();
    }
}

//! `config show`: every key's value in force and the layer it came from (default, the file,
//! an environment variable, a flag), with every secret hidden: passwords in URLs (user
//! information or `?password=`) redacted, password and key files named, never read into it.

use std::path::PathBuf;

use toml::Value;

use super::settable::{self, KEYS};
use super::{file, Config, Overrides};
use crate::error::{redact_url, Error};

/// Where a value came from: the last layer that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    Default,
    File(PathBuf),
    Environment(String),
    Flag(String),
}

impl Origin {
    /// `default`, `file`, `environment` or `flag`.
    pub(crate) fn layer(&self) -> &'static str {
        match self {
            Origin::Default => "default",
            Origin::File(_) => "file",
            Origin::Environment(_) => "environment",
            Origin::Flag(_) => "flag",
        }
    }

    /// The file, the variable or the flag; nothing for a default.
    pub(crate) fn name(&self) -> Option<String> {
        match self {
            Origin::Default => None,
            Origin::File(p) => Some(p.display().to_string()),
            Origin::Environment(v) | Origin::Flag(v) => Some(v.clone()),
        }
    }
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} {name}", self.layer()),
            None => f.write_str(self.layer()),
        }
    }
}

/// One key as `config show` prints it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    /// `section.key` as in the file.
    pub key: &'static str,
    /// The value in force with its secrets hidden; `None`: not set.
    pub value: Option<Value>,
    pub origin: Origin,
    /// What else a reader needs: where a URL's password came from, how a default is derived.
    pub note: Option<String>,
}

/// The URL keys whose password a `*_password_file` supplies.
const PASSWORD_FILES: [(&str, &str); 4] = [
    ("redis_url", "redis_password_file"),
    ("mysql_url", "mysql_password_file"),
    ("report_mysql_url", "report_mysql_password_file"),
    ("amqp_url", "amqp_password_file"),
];

/// The config file read, and how it was chosen.
pub(crate) fn file_origin(cfg: &Config, o: &Overrides, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let path = cfg.file.as_ref()?.display().to_string();
    let how = if o.on_command_line.contains(&"config") {
        "flag --config"
    } else if env("ATTENDANCE_CONFIG").is_some() {
        "environment ATTENDANCE_CONFIG"
    } else {
        "found in the first place looked at that has one"
    };
    Some(format!("{path} ({how})"))
}

/// Every key of `cfg` (loaded from `o` and `env`), in the table's order.
pub(crate) fn settings(
    cfg: &Config,
    o: &Overrides,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Setting>, Error> {
    let in_file: Vec<String> = match &cfg.file {
        Some(path) => file::entries(&file::read_bounded(path)?, &path.display().to_string())?
            .into_iter()
            .map(|(name, _)| name)
            .collect(),
        None => Vec::new(),
    };
    let origin = |name: &str| {
        let var = settable::find(name).map(settable::Key::env_var).unwrap_or_default();
        if o.on_command_line.contains(&name) {
            Origin::Flag(format!("--{}", name.replace('_', "-")))
        } else if env(&var).is_some() {
            Origin::Environment(var)
        } else if let (Some(path), true) = (&cfg.file, in_file.iter().any(|n| n == name)) {
            Origin::File(path.clone())
        } else {
            Origin::Default
        }
    };
    // Policy is the rulebook's (`policy show`), not this host's.
    Ok(KEYS
        .iter()
        .filter(|key| !super::rulebook::is_policy_key(key.name))
        .map(|key| {
            let mut note = None;
            if let Some((_, pw)) = PASSWORD_FILES.iter().find(|(url, _)| *url == key.name) {
                if let Some(Value::String(file)) = settable::find(pw).and_then(|k| k.value(cfg)) {
                    note = Some(format!("password from {pw} {file} ({})", origin(pw)));
                }
            }
            if key.name == "policy.auto_kind_split" && cfg.policy.auto_kind_split.is_none() {
                note = Some("midway between policy.checkin_deadline and policy.checkout_from".into());
            }
            Setting {
                key: key.name,
                value: key.value(cfg).map(|v| hidden(key.name, v)),
                origin: origin(key.name),
                note,
            }
        })
        .collect())
}

/// A URL's password hidden (every URL of a list); other values as they are. Files holding
/// secrets are only named by their keys, so nothing else can carry one.
fn hidden(key: &str, v: Value) -> Value {
    if !key.ends_with("url") {
        return v;
    }
    match v {
        Value::String(s) => Value::String(redact_url(&s)),
        Value::Array(a) => Value::Array(a.into_iter().map(|u| hidden(key, u)).collect()),
        other => other,
    }
}

/// The settings as a TOML file: top-level keys first, then one table per section, each value
/// followed by its origin in a comment; a key not set is a comment.
pub(crate) fn to_toml(file: Option<&str>, settings: &[Setting]) -> String {
    let mut out = String::from("# The configuration in force; after each value, where it came from.\n");
    out += &match file {
        Some(f) => format!("# config file: {f}\n"),
        None => "# config file: none (defaults, environment and flags only)\n".to_string(),
    };
    let mut sections: Vec<&str> = Vec::new();
    for s in settings {
        let section = s.key.split_once('.').map_or("", |(sec, _)| sec);
        if !sections.contains(&section) {
            sections.push(section);
        }
    }
    for section in sections {
        if !section.is_empty() {
            out += &format!("\n[{section}]\n");
        }
        for s in settings
            .iter()
            .filter(|s| s.key.split_once('.').map_or("", |(sec, _)| sec) == section)
        {
            let name = s.key.rsplit('.').next().unwrap_or(s.key);
            let note = s.note.as_ref().map(|n| format!("; {n}")).unwrap_or_default();
            out += &match &s.value {
                Some(v) => format!("{name} = {v}  # {}{note}\n", s.origin),
                None => format!("# {name}: not set  # {}{note}\n", s.origin),
            };
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(cfg: &Config) -> Vec<Setting> {
        settings(cfg, &Overrides::default(), |_| None).unwrap()
    }

    #[test]
    fn every_key_is_shown_and_a_file_of_its_values_gives_the_same_configuration() {
        let mut c = Config::from_toml("namespace = \"acme\"\n").unwrap();
        c.amqp_url = "amqp://n1/%2f,amqp://n2/%2f".into();
        c.amqp.management_url = Some("http://m@h:15672".into());
        let first = shown(&c);
        let host_keys = KEYS.iter().filter(|k| !super::super::rulebook::is_policy_key(k.name));
        assert_eq!(first.len(), host_keys.count());
        assert!(
            first.iter().all(|s| !s.key.starts_with("policy.")),
            "policy is the rulebook's"
        );
        // Each shown value, read back as a file, sets the same value.
        let text = to_toml(None, &first);
        let again = Config::from_toml(&text).unwrap();
        let values = |s: Vec<Setting>| s.into_iter().map(|s| (s.key, s.value)).collect::<Vec<_>>();
        assert_eq!(values(shown(&again)), values(first), "{text}");
        assert_eq!(again.amqp_urls(), ["amqp://n1/%2f", "amqp://n2/%2f"]);
    }

    #[test]
    fn passwords_in_urls_are_hidden_wherever_they_are() {
        let c = Config {
            redis_url: "redis://:r\"p w@h:6379/".into(),
            mysql_url: "mysql://u@h/db?password=qpw&x=1".into(),
            amqp_url: "amqp://a:apw@n1/%2f,amqp://b:bpw@n2/%2f".into(),
            ..Config::default()
        };
        let text = to_toml(None, &shown(&c));
        for secret in ["r\"p w", "p w", "qpw", "apw", "bpw"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert!(text.contains("mysql://u@h/db?password=***&x=1"), "{text}");
        assert!(text.contains("\"amqp://a:***@n1/%2f\""), "{text}");
    }
}

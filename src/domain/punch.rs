//! A punch's kind, check-in or check-out, and its one spelling (`in`, `out`) on the command
//! line, on the wire and in the stores. Every family reads it: the day's record, the event, the
//! punch files.

use serde::{Deserialize, Serialize};

/// Punch kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    In,
    Out,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::In => "in",
            Kind::Out => "out",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "in" => Ok(Kind::In),
            "out" => Ok(Kind::Out),
            _ => Err(format!("kind must be 'in' or 'out', not '{s}'")),
        }
    }
}

//! The roles of docs/security.md that have an account of their own in the stores (kiosk,
//! relay, report, supervisor, hr, jobs, owner): their names, narrowest first, as `doctor
//! --role` takes them. What each may do in MySQL is `mysql::grants`.

/// A role of docs/security.md that has a MySQL account (the relay's only reads what its
/// absence alerts need).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
/// Declared narrowest first, as `ALL` lists them.
pub enum Role {
    Kiosk,
    /// `relay --follow`: the roster, leave and calendar, for the absence alerts.
    Relay,
    /// The reporting account: reports only.
    Report,
    Supervisor,
    Hr,
    /// The jobs account of the three-account split.
    Jobs,
    Owner,
}

impl Role {
    /// Narrowest first: when several roles are covered, the first is the one named.
    pub(crate) const ALL: [Role; 7] = [
        Role::Kiosk,
        Role::Relay,
        Role::Report,
        Role::Supervisor,
        Role::Hr,
        Role::Jobs,
        Role::Owner,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Kiosk => "kiosk",
            Role::Relay => "relay",
            Role::Supervisor => "supervisor",
            Role::Hr => "hr",
            Role::Report => "report",
            Role::Jobs => "jobs",
            Role::Owner => "owner",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == s)
    }
}

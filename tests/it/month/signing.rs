//! The month's signing set-up, all in one place: the keys its kiosks and its front desk sign
//! with, the rotation of the kiosks' key mid-month, and the keyring every command verifies with.

use std::path::PathBuf;

use crate::common::{new_secret, TestEnv};

/// What the commands of the month sign and verify with.
pub struct Signing {
    /// The keyring (`signing.keyring_file`) every command is given: the consumers verify with
    /// it, and a check-in reads from it whether its own key may replay offline punches.
    pub ring: PathBuf,
    /// The kiosks' key file before the rotation, and after it.
    kiosk: [PathBuf; 2],
    /// The front desk's key file: it may not replay, so its back-dated punches are held.
    pub desk: PathBuf,
    /// The first day (index) signed with the new kiosk key.
    pub rotation_day: usize,
}

impl Signing {
    /// The key file the kiosks sign with on day `day` (an index into the month).
    pub fn kiosk(&self, day: usize) -> &PathBuf {
        &self.kiosk[usize::from(day >= self.rotation_day)]
    }
}

/// Every key of the month: two kiosk keys that may replay offline punches (the first used
/// before `rotation_day`, the second from it on, both kept in the keyring so that what the old
/// one signed still verifies), and a front-desk key that may not replay.
pub fn setup(env: &TestEnv, rotation_day: usize) -> Signing {
    let secrets = [new_secret(), new_secret(), new_secret()];
    let key =
        |name: &str, id: &str, secret: &str| env.file(name, &format!("key_id = \"{id}\"\nsecret = \"{secret}\"\n"));
    let kiosk = [
        key("kiosk-2026a.key", "kiosk-2026a", &secrets[0]),
        key("kiosk-2026b.key", "kiosk-2026b", &secrets[1]),
    ];
    let desk = key("desk.key", "desk", &secrets[2]);
    let ring = env.keyring(
        &[
            ("kiosk-2026a", &secrets[0], true),
            ("kiosk-2026b", &secrets[1], true),
            ("desk", &secrets[2], false),
        ],
        &[],
    );
    Signing {
        ring,
        kiosk,
        desk,
        rotation_day,
    }
}

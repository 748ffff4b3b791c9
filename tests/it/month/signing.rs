//! The month's signing set-up, all in one place: the keys its kiosks and its front desk sign
//! with, the rotation of the kiosks' key mid-month, and the keyring every command is given.

use std::path::PathBuf;

use crate::common::TestEnv;

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

/// Every key of the month, each an Ed25519 key in the registry (`keys generate` and `keys add`,
/// the owner's): two kiosk keys that the registry lets replay offline punches (the first used
/// before `rotation_day`, the second from it on, both kept so that what the old one signed still
/// verifies), and a front-desk key that may not replay. The keyring file holds no secret: the
/// consumers verify with the registry's public keys, copied to the month's Redis by its init-day.
pub fn setup(env: &TestEnv, rotation_day: usize) -> Signing {
    let kiosk = [
        env.registered_key("kiosk-2026a", true),
        env.registered_key("kiosk-2026b", true),
    ];
    let desk = env.registered_key("desk", false);
    let ring = env.keyring(&[], &[]);
    Signing {
        ring,
        kiosk,
        desk,
        rotation_day,
    }
}

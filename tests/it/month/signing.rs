//! The month's signing set-up, all in one place: the keys its kiosks and its front desk sign
//! with, the rotation of the kiosks' key mid-month, and the keyring every command verifies with.

use std::path::PathBuf;

use crate::common::TestEnv;

/// What the commands of the month sign and verify with.
pub struct Signing {
    /// The keyring (`signing.keyring_file`) every command is given: empty (the keys are the
    /// registry's, which says which may replay).
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

    /// The kiosks' key before the rotation: revoked on the rotation day, from that moment on.
    pub fn retired(&self) -> (&'static str, &PathBuf) {
        ("kiosk-2026a", &self.kiosk[0])
    }
}

/// Every key of the month: two kiosk keys that may replay offline punches (the first used
/// before `rotation_day`, the second from it on, both kept in the registry so that what the old
/// one signed still verifies), and a front-desk key that may not replay. Ed25519 key files made
/// here by `keys generate` (no store touched); [`Signing::register`] adds them to the registry
/// once the month's database is migrated. The keyring holds no shared secret: replay authority
/// and verification are the registry's.
pub fn setup(env: &TestEnv, rotation_day: usize) -> Signing {
    let key = |id: &str| {
        let path = env.dir.join(format!("{id}.key"));
        let o = env
            .std_cmd()
            .args(["keys", "generate", id, "--out", path.to_str().unwrap(), "--json"])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "keys generate {id}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        env.file(&format!("{id}.pub"), v["public_key"].as_str().unwrap());
        path
    };
    let kiosk = [key("kiosk-2026a"), key("kiosk-2026b")];
    let desk = key("desk");
    let ring = env.keyring(&[], &[]);
    Signing {
        ring,
        kiosk,
        desk,
        rotation_day,
    }
}

impl Signing {
    /// The keys as `keys add` takes them: (id, public key file, may replay).
    pub fn registry(&self) -> [(&'static str, PathBuf, bool); 3] {
        let public = |k: &PathBuf| k.with_extension("pub");
        [
            ("kiosk-2026a", public(&self.kiosk[0]), true),
            ("kiosk-2026b", public(&self.kiosk[1]), true),
            ("desk", public(&self.desk), false),
        ]
    }
}

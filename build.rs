//! Build script: the git commit the binary is built from, for `--version`; "unknown" outside a
//! git checkout or without git. Reads the local repository only: no network.

// A build script speaks to cargo on stdout (`cargo:...` lines): println! is its protocol.
#![allow(clippy::disallowed_macros)]

use std::path::Path;
use std::process::Command;

/// A git command's one-line answer, if git is there and answers.
fn git(args: &[&str]) -> Option<String> {
    let o = Command::new("git").args(args).output().ok()?;
    let out = String::from_utf8_lossy(&o.stdout).trim().to_string();
    (o.status.success() && !out.is_empty()).then_some(out)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BUILD_GIT_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Built again when HEAD moves: HEAD itself (a checkout), and the branch it names (a commit),
    // loose or packed. Only files that exist: a missing one would rerun this on every build.
    let mut watched = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watched.push(format!("{dir}/HEAD"));
    }
    if let (Some(common), Some(branch)) = (
        git(&["rev-parse", "--git-common-dir"]),
        git(&["symbolic-ref", "-q", "HEAD"]),
    ) {
        watched.push(format!("{common}/{branch}"));
        watched.push(format!("{common}/packed-refs"));
    }
    for file in watched.iter().filter(|f| Path::new(f).exists()) {
        println!("cargo:rerun-if-changed={file}");
    }
}

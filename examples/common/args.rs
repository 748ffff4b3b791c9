//! The benchmarks' flags: `--name N` pairs, each with a default. A flag without a number
//! after it is an error, not silently the default; and where the release binary is. Shared by
//! the benchmarks.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The number after `name` on the command line, or `default` when the flag is absent.
pub fn arg(name: &str, default: u32) -> Result<u32> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        Some(i) => {
            let v = args
                .get(i + 1)
                .with_context(|| format!("{name}: a number is needed after it"))?;
            v.parse().with_context(|| format!("{name}: '{v}' is not a number"))
        }
        None => Ok(default),
    }
}

/// The word after `name` on the command line, if the flag is there.
#[allow(dead_code)] // not every benchmark takes a word
pub fn text(name: &str) -> Result<Option<&'static str>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(i) = args.iter().position(|a| a == name) else {
        return Ok(None);
    };
    let v = args
        .get(i + 1)
        .with_context(|| format!("{name}: a word is needed after it"))?;
    Ok(Some(v.clone().leak()))
}

/// Run the benchmark (unless `--cleanup` only asks to remove what a killed run left behind),
/// then clean up, also after a failure: a failed run must not leave queues, keys or a database.
#[allow(dead_code)] // not every benchmark creates names on the shared services
pub fn run_then_cleanup(bench: impl FnOnce() -> Result<()>, cleanup: impl FnOnce() -> Result<()>) -> Result<()> {
    let result = if std::env::args().any(|a| a == "--cleanup") {
        Ok(())
    } else {
        bench()
    };
    let cleaned = cleanup();
    result.and(cleaned)
}

/// `bin` pointed at `cfg`'s services and namespace, and at no config file: how a benchmark
/// runs the binary (each adds its own settings).
#[allow(dead_code)] // not every benchmark runs the binary
pub fn command(bin: &Path, cfg: &attendance::Config) -> std::process::Command {
    let mut c = std::process::Command::new(bin);
    c.env("ATTENDANCE_REDIS_URL", &cfg.redis_url)
        .env("ATTENDANCE_MYSQL_URL", &cfg.mysql_url)
        .env("ATTENDANCE_AMQP_URL", &cfg.amqp_url)
        .env("ATTENDANCE_NAMESPACE", &cfg.namespace)
        // Policy is the rulebook's (`steps::POLICY`, set after migrate), never a variable.
        .env_remove("ATTENDANCE_CONFIG");
    c
}

/// The `attendance` binary built beside this example (`cargo build --release --bins --examples`),
/// or `--bin PATH`'s (an older build, to measure it against this one with the same benchmark).
#[allow(dead_code)] // not every benchmark runs the binary
pub fn binary() -> Result<PathBuf> {
    if let Some(bin) = text("--bin")? {
        let bin = PathBuf::from(bin);
        if !bin.is_file() {
            bail!("--bin: {} is no file", bin.display());
        }
        return Ok(bin);
    }
    let exe = std::env::current_exe()?;
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .context("no target dir")?
        .join("attendance");
    if !bin.exists() {
        bail!(
            "{} is missing: run `cargo build --release --bins --examples` first",
            bin.display()
        );
    }
    Ok(bin)
}

/// This run's namespace (and the suffix of its database): `--tag NAME`, else `default`. Two
/// people benchmarking at once on the shared services give different tags, so that neither run
/// resets or deletes the other's keys, queues and database (`--cleanup` takes the same tag). A
/// malformed tag is a one-line error and exit 2.
#[allow(dead_code)] // not every benchmark creates names on the shared services
pub fn tag(default: &'static str) -> &'static str {
    static TAG: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TAG.get_or_init(|| {
        parse_tag(default).unwrap_or_else(|e| {
            let me = std::env::args().next().unwrap_or_default();
            let me = Path::new(&me)
                .file_name()
                .map_or("benchmark".into(), |n| n.to_string_lossy());
            eprintln!("{me}: {e:#}");
            std::process::exit(2)
        })
    })
}

#[allow(dead_code)]
fn parse_tag(default: &str) -> Result<String> {
    let args: Vec<String> = std::env::args().collect();
    let t = match args.iter().position(|a| a == "--tag") {
        Some(i) => args.get(i + 1).context("--tag: a name is needed after it")?.clone(),
        None => default.to_string(),
    };
    let ok = (1..=24).contains(&t.len())
        && t.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !ok {
        bail!("--tag: '{t}' must be 1 to 24 of a-z, 0-9 and '_' (it names a namespace and a database)");
    }
    Ok(t)
}

/// The configuration of a run in namespace `ns` and database `attendance_<ns>`, in Paris time:
/// `ATTENDANCE_REDIS_URL` and `ATTENDANCE_MYSQL_URL` (its server part) point it elsewhere.
#[allow(dead_code)] // not every benchmark builds its own configuration
pub fn ns_config(ns: &str) -> Result<attendance::Config> {
    let server = std::env::var("ATTENDANCE_MYSQL_URL").unwrap_or_else(|_| "mysql://root@127.0.0.1:3306/x".into());
    let base = server.rsplit_once('/').map_or(server.as_str(), |(b, _)| b);
    Ok(attendance::Config::load(&attendance::Overrides {
        redis_url: std::env::var("ATTENDANCE_REDIS_URL").ok(),
        mysql_url: Some(format!("{base}/attendance_{ns}")),
        namespace: Some(ns.into()),
        timezone: Some("Europe/Paris".into()),
        ..Default::default()
    })?)
}

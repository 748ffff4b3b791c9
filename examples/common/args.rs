//! The benchmarks' flags: `--name N` pairs, each with a default. A flag without a number
//! after it is an error, not silently the default. Shared by `bench` and `settle_bench`.

use anyhow::{Context, Result};

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

//! `attendance config show`: the configuration in force as TOML (or JSON), each value with
//! the layer it came from; secrets hidden (config/show.rs).

use anyhow::Result;

use super::Ctx;
use crate::cli::ConfigCommand;
use crate::config::{file_origin, settings, to_toml, Overrides};

pub(crate) fn run(ctx: &Ctx, cmd: ConfigCommand, o: &Overrides) -> Result<()> {
    let ConfigCommand::Show { output } = cmd;
    let env = |name: &str| std::env::var(name).ok();
    let shown = settings(&ctx.cfg, o, env)?;
    let file = file_origin(&ctx.cfg, o, env);
    if output.json {
        let keys: serde_json::Map<String, serde_json::Value> = shown
            .iter()
            .map(|s| {
                let value = s.value.as_ref().map(|v| serde_json::to_value(v).unwrap_or_default());
                let entry = serde_json::json!({
                    "value": value,
                    "origin": s.origin.layer(),
                    "from": s.origin.name(),
                    "note": s.note,
                });
                (s.key.to_string(), entry)
            })
            .collect();
        let file = ctx.cfg.file.as_ref().map(|p| p.display().to_string());
        crate::output::json(&serde_json::json!({ "file": file, "settings": keys }))?;
    } else {
        // Each line made inert like every text a person reads: a value may hold any character.
        for line in to_toml(file.as_deref(), &shown).lines() {
            textln!("{line}")?;
        }
    }
    Ok(())
}

/// `-v`: the configuration in force on stderr, as `config show` prints it (secrets hidden,
/// each value with where it came from), every line made inert.
pub(crate) fn verbose(ctx: &Ctx, o: &Overrides) {
    if !ctx.out.verbose || ctx.out.quiet {
        return;
    }
    let env = |name: &str| std::env::var(name).ok();
    match settings(&ctx.cfg, o, env) {
        Ok(shown) => {
            for line in to_toml(file_origin(&ctx.cfg, o, env).as_deref(), &shown).lines() {
                ctx.out.verbose(crate::domain::text::inert(line));
            }
        }
        Err(e) => ctx.out.verbose(format!("config: not shown: {e}")),
    }
}

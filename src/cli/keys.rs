//! `attendance keys generate|add|revoke|list`: kiosk keys and their registry (docs/security.md).

use anyhow::Result;

use crate::cli::{Ctx, KeysCommand};
use crate::ops;

pub(crate) fn run(ctx: &Ctx, cmd: KeysCommand) -> Result<()> {
    match cmd {
        KeysCommand::Generate { id, out, output } => {
            let g = ops::keys::generate(&id, &out)?;
            if output.json {
                return crate::output::json(&g);
            }
            textln!("{}", g.public_key)?;
            ctx.say(format!(
                "the private key of {} is in {} (mode 0600: the kiosk's signing.key_file); \
                 the public key above goes to `attendance keys add {} --public-key FILE`",
                g.key_id, g.file, g.key_id
            ));
        }
        KeysCommand::Add {
            id,
            public_key,
            replay,
            output,
        } => {
            let row = ops::keys::add(&ctx.cfg, &id, &public_key, replay)?;
            if output.json {
                return crate::output::json(&row);
            }
            ctx.say(format!(
                "key {} added by {}{}",
                row.key_id,
                row.added_by,
                if row.replay { ", may replay offline punches" } else { "" }
            ));
        }
        KeysCommand::Revoke { id, at, reason, output } => {
            let row = ops::keys::revoke(&ctx.cfg, &id, at, &reason)?;
            if output.json {
                return crate::output::json(&row);
            }
            ctx.say(format!(
                "key {} revoked from {}: its events recorded from then on are refused",
                row.key_id,
                row.revoked_at.map(crate::domain::instant::utc_text).unwrap_or_default()
            ));
        }
        KeysCommand::List { output } => {
            let rows = ops::keys::list(&ctx.cfg)?;
            if output.json {
                return crate::output::json(&rows);
            }
            let utc = crate::domain::instant::utc_text;
            crate::cli::table(
                &["key", "public key", "replay", "added", "by", "revoked from", "reason"],
                rows.into_iter()
                    .map(|k| {
                        vec![
                            k.key_id,
                            k.public_key,
                            if k.replay { "yes" } else { "no" }.into(),
                            utc(k.added_at),
                            format!("{} ({})", k.added_by, k.added_os_user),
                            k.revoked_at.map(utc).unwrap_or_default(),
                            k.revoke_reason.unwrap_or_default(),
                        ]
                    })
                    .collect(),
            )?;
        }
    }
    Ok(())
}

//! `attendance policy show|set|history`: the company's rulebook (docs/policy.md).

use anyhow::Result;

use crate::cli::{Ctx, PolicyCommand};
use crate::ops::people::policy::{self, SetRequest};

pub(crate) fn run(ctx: &Ctx, cmd: PolicyCommand) -> Result<()> {
    match cmd {
        PolicyCommand::Show { date, output } => {
            let shown = policy::show(&ctx.cfg, date)?;
            if output.json {
                return crate::output::json(&shown);
            }
            let rows = shown
                .keys
                .iter()
                .map(|k| {
                    let since = k.since.map_or("default".to_string(), |d| format!("from {d}"));
                    vec![k.key.to_string(), k.value.clone(), since]
                })
                .collect();
            ctx.say(format!("policy in force on {}", shown.date));
            crate::cli::table(&["key", "value", "since"], rows)?;
        }
        PolicyCommand::Set {
            key,
            value,
            from,
            reason,
            output,
        } => {
            let req = SetRequest {
                key: &key,
                value: &value,
                from,
                reason: &reason,
            };
            let set = policy::set(&ctx.cfg, &req)?;
            if output.json {
                return crate::output::json(&set);
            }
            let v = &set.version;
            ctx.say(format!(
                "{} = {} from {} (was {}), set by {}",
                v.key,
                v.value,
                v.from,
                v.before.as_deref().unwrap_or("the default"),
                v.employee_id.as_deref().unwrap_or(&v.os_user)
            ));
            super::resettled::say(ctx, &set.resettled, None, false);
        }
        PolicyCommand::History { output } => {
            let rows = policy::history(&ctx.cfg)?;
            if output.json {
                return crate::output::json(&rows);
            }
            let rows = rows
                .into_iter()
                .map(|r| {
                    vec![
                        r.id.to_string(),
                        r.key,
                        r.from.to_string(),
                        r.before.unwrap_or_default(),
                        r.value,
                        r.employee_id.unwrap_or_else(|| r.os_user.clone()),
                        r.os_user,
                        crate::domain::instant::utc_text(r.set_at),
                        r.reason,
                    ]
                })
                .collect();
            crate::cli::table(
                &[
                    "id", "key", "from", "before", "after", "by", "os user", "set at", "reason",
                ],
                rows,
            )?;
        }
    }
    Ok(())
}

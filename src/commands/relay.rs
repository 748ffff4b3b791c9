//! `attendance relay [--follow]`: publish what the outboxes hold, once or until Ctrl-C.

use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;

use super::Ctx;
use crate::cli::RelayArgs;
use crate::error::Error;
use crate::keys::Keys;
use crate::notify::{self, DrainReport, Publisher};
use crate::{board, interrupt};

pub fn run(ctx: &Ctx, args: RelayArgs) -> Result<()> {
    let keys = Keys::new(&ctx.cfg.namespace);
    let mut con = board::Redis::open(&ctx.cfg)?;
    if !args.follow {
        let r = notify::drain_outboxes(&ctx.cfg, &mut con, &keys)?;
        print(ctx, &args, &r)?;
        if r.pending > 0 {
            return Err(Error::Partial(format!(
                "{} events still pending (not confirmed by the broker)",
                r.pending
            ))
            .into());
        }
        return Ok(());
    }
    let stop = interrupt::stop_flag();
    let mut publisher: Option<Publisher> = None;
    let mut total = DrainReport::default();
    while !stop.load(Ordering::SeqCst) {
        // A broken connection is dropped and reopened on the next round; the events wait in Redis.
        if publisher.as_ref().is_some_and(|p| p.problem().is_some()) {
            publisher = None;
        }
        if publisher.is_none() {
            match Publisher::connect(&ctx.cfg) {
                Ok(p) => publisher = Some(p),
                Err(e) => ctx.out.status(format!("relay: {}", crate::error::one_line(&e))),
            }
        }
        if let Some(p) = publisher.as_mut() {
            let r = notify::drain_with(p, &mut con, &keys)?;
            if r.departments > 0 {
                print(ctx, &args, &r)?;
            }
            total.sent += r.sent;
            total.pending = r.pending;
        }
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
    if let Some(p) = publisher {
        p.close();
    }
    ctx.out.status(format!(
        "relay: stopped; {} events sent in all, {} pending",
        total.sent, total.pending
    ));
    Ok(())
}

fn print(ctx: &Ctx, args: &RelayArgs, r: &DrainReport) -> Result<()> {
    if args.output.json {
        crate::output::json(r)?;
    } else {
        crate::outln!(
            "{} events sent, {} pending, from {} departments",
            r.sent,
            r.pending,
            r.departments
        )?;
        if r.pending > 0 {
            let why = r.problem.as_deref().unwrap_or("nacked or returned by the broker");
            ctx.out.status(format!("relay: pending events stay in Redis ({why})"));
        }
    }
    Ok(())
}

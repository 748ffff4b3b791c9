//! Riding out a Redis restart in the long-running commands (`relay --follow`, a live
//! `watch-dept`), as they ride out a broker's: which errors are Redis gone, and reopening the
//! board with the same growing wait between attempts as a broker's reconnection.

use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use crate::config::Config;
use crate::interrupt::Backoff;
use crate::redis::board::Board;

/// Whether the error is Redis gone (refused, cut, silent, still loading after a restart), as
/// opposed to Redis refusing a command (OOM, READONLY) or any other failure.
pub(crate) fn redis_gone(e: &anyhow::Error) -> bool {
    crate::redis::failure::gone(e)
}

/// After `why` (Redis gone): say "Redis lost: ...; reconnecting", reopen the board, waiting
/// longer between attempts (to 8 s), and say "Redis back" once it answers. `None`: stopped by
/// Ctrl-C or SIGTERM meanwhile. An error that is not Redis gone (a wrong URL) ends it.
pub(crate) fn board_again(
    cfg: &Config,
    why: &anyhow::Error,
    stop: &AtomicBool,
    say: &mut dyn FnMut(String),
) -> Result<Option<Board>> {
    say(format!("Redis lost: {}; reconnecting", super::exit::one_line(why)));
    let mut backoff = Backoff::default();
    let mut last = String::new();
    loop {
        if !backoff.sleep(stop) {
            return Ok(None);
        }
        match Board::open(cfg).and_then(|mut b| b.ping().map(|()| b)) {
            Ok(b) => {
                say("Redis back".to_string());
                return Ok(Some(b));
            }
            Err(e) if redis_gone(&e) && !stop.load(Ordering::SeqCst) => {
                // Each new reason once, not every attempt.
                let now = super::exit::one_line(&e);
                if now != last {
                    say(format!("Redis still away: {now}; reconnecting"));
                    last = now;
                }
            }
            Err(_) if stop.load(Ordering::SeqCst) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
}

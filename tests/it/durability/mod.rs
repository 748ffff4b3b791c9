//! Nothing acknowledged is lost and no wait is unbounded: Redis crashed, restarted or failed
//! over, services that stall or block, a bulk check-in whose Redis fails; a punch sent twice is
//! one punch, before or after settle.

mod blocked_broker;
mod bulk_redis_fails;
mod failover;
mod journal_once;
mod journal_read;
mod redis_crash;
mod redis_restart;
mod replay;
mod stall;

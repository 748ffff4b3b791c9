//! Pipelines sent one ahead of their replies, so that Redis never waits for the client: while
//! Redis runs one pipeline's scripts, the client reads the previous one's replies and builds
//! the next. A synchronous pipeline leaves Redis idle for as long as the client builds and
//! parses (about a third of a bulk check-in's time in the board-alone benchmark).

use anyhow::Result;
use redis::{ConnectionLike, RedisResult, Value};

use super::Redis;
use crate::redis::conn::RedisConn;

impl Redis {
    /// Run each pipeline of `pipes` in order and hand its replies (one per command, server
    /// errors as `Err` in place) to `each`, in order. Stops at the first failure: of Redis, or
    /// of `each`. A single node overlaps them; a Redis Cluster, whose pipelines are split per
    /// master, waits for each pipeline's replies before it sends the next.
    pub(super) fn each_pipeline(
        &mut self,
        pipes: &mut dyn Iterator<Item = redis::Pipeline>,
        each: &mut dyn FnMut(Vec<RedisResult<Value>>) -> Result<()>,
    ) -> Result<()> {
        match self {
            Redis::Single(c) => overlapped(c, pipes, each),
            Redis::Cluster(c) => one_at_a_time(c.as_mut(), pipes, each),
        }
    }
}

/// Each pipeline's replies awaited before the next is sent.
fn one_at_a_time(
    con: &mut dyn ConnectionLike,
    pipes: &mut dyn Iterator<Item = redis::Pipeline>,
    each: &mut dyn FnMut(Vec<RedisResult<Value>>) -> Result<()>,
) -> Result<()> {
    for pipe in pipes {
        let replies: Vec<Value> = pipe.query(con)?;
        each(replies.into_iter().map(Value::extract_error).collect())?;
    }
    Ok(())
}

/// One pipeline always in flight: pipeline k+1 is written before k's replies are read. On a
/// failure the replies still owed by the pipeline in flight are read (and dropped) first, so
/// the connection stays in step for its next command; a broken connection is not read again.
fn overlapped(
    w: &mut RedisConn,
    pipes: &mut dyn Iterator<Item = redis::Pipeline>,
    each: &mut dyn FnMut(Vec<RedisResult<Value>>) -> Result<()>,
) -> Result<()> {
    let mut owed: Option<usize> = None;
    let mut failed = None;
    for pipe in pipes {
        w.send_packed(&pipe.get_packed_pipeline())?;
        if let Some(n) = owed.replace(pipe.len()) {
            // An I/O failure leaves nothing to read in step: give up at once.
            if let Err(e) = receive(w, n).map_err(anyhow::Error::new).and_then(&mut *each) {
                failed = Some(e);
                break;
            }
        }
    }
    match (owed, failed) {
        (Some(n), None) => each(receive(w, n)?),
        (Some(n), Some(e)) => {
            if !broken(&e) {
                let _ = receive(w, n);
            }
            Err(e)
        }
        (None, _) => Ok(()),
    }
}

/// Whether `e` is the connection's own failure (nothing more can be read in step).
fn broken(e: &anyhow::Error) -> bool {
    e.downcast_ref::<redis::RedisError>()
        .is_some_and(|e| e.is_io_error() || e.is_timeout())
}

/// The next `n` replies: a server error stands in its place (as in a pipeline's own reply
/// list); pushes (RESP3) are no replies. An I/O failure ends it.
fn receive(w: &mut RedisConn, n: usize) -> RedisResult<Vec<RedisResult<Value>>> {
    let mut replies = Vec::with_capacity(n);
    while replies.len() < n {
        match w.recv() {
            Ok(Value::Push { .. }) => {}
            Ok(v) => replies.push(v.extract_error()),
            Err(e) if e.is_io_error() || e.is_timeout() => return Err(e),
            Err(e) => replies.push(Err(e)),
        }
    }
    Ok(replies)
}

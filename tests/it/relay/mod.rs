//! Telling supervisors: events into the department queues, the outbox and its backlog, the
//! hand-off to a following relay, absence alerts and bounded queues.

mod alerts;
mod backlog;
mod handoff;
mod notify;
mod outbox;
mod queue_limits;

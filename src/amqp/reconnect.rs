//! What long-running consumers and relays need to survive a broker going away: telling a lost
//! broker from any other failure (the wait between attempts is `interrupt::Backoff`, shared
//! with the reconnection to Redis).

use crate::error::{Error, Service};

/// Whether the error is the broker's (a closed connection, a refused or silent node), as
/// opposed to Redis, a closed stdout or a bug: only the broker's is worth reconnecting for.
pub(crate) fn broker_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<amiquip::Error>().is_some()
            || matches!(
                c.downcast_ref::<Error>(),
                Some(Error::Service {
                    service: Service::Rabbitmq,
                    ..
                })
            )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_brokers_errors_call_for_a_reconnection() {
        let amqp: anyhow::Error = Error::service(Service::Rabbitmq, "gone").into();
        assert!(broker_gone(&amqp.context("consuming")));
        assert!(!broker_gone(&Error::service(Service::Redis, "gone").into()));
        assert!(!broker_gone(&anyhow::anyhow!("broken pipe")));
    }
}

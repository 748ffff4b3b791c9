//! What an amiquip error means to the program: RabbitMQ failing (exit 3).

use crate::error::{Service, StoreSays};

/// What amiquip's error `cause` says, if it is one (see [`crate::error::StoreCheck`]).
pub(crate) fn says(cause: &(dyn std::error::Error + 'static)) -> Option<StoreSays> {
    cause.downcast_ref::<amiquip::Error>().map(|e| StoreSays::Failed {
        service: Service::Rabbitmq,
        words: e.to_string(),
    })
}

/// One line for an error of this store's own making (its connections, its consumers), in
/// RabbitMQ's words: the whole program's line is `crate::ops::exit::one_line`, above the stores.
pub(crate) fn one_line(err: &anyhow::Error) -> String {
    crate::error::one_line_with(err, &[says])
}

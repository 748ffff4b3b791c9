//! What a Redis client error means to the program: Redis failing (exit 3).

use crate::error::{Service, StoreSays};

/// What the `redis` client's error `cause` says, if it is one (see [`crate::error::StoreCheck`]).
pub(crate) fn says(cause: &(dyn std::error::Error + 'static)) -> Option<StoreSays> {
    cause.downcast_ref::<redis::RedisError>().map(|e| StoreSays::Failed {
        service: Service::Redis,
        words: e.to_string(),
    })
}

//! Clustered services: the whole day on a Redis Cluster, a RabbitMQ cluster losing a node, and
//! a list of brokers tried in order.

mod broker_cluster;
mod broker_list;
mod redis_cluster;

#!/usr/bin/env bash
# The broker-cluster fail-over test, N tries in a row (default 10), each on a private 3-node
# RabbitMQ cluster of its own: `relay --follow` running, a stream of check-ins, the node that
# leads the department queues killed (`kill -9`). A try passes when every acknowledged
# check-in is in its department's queue. Prints each try and `cluster tries: P of N passed`;
# exits non-zero when a try failed. Needs rabbitmq-server installed (the suite runs one try).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10}
case "$N" in ''|*[!0-9]*|0) echo "usage: scripts/cluster-tries.sh [TRIES]  (a positive number)" >&2; exit 2 ;; esac
export ATTENDANCE_TEST_CLUSTER_TRIES=$N
exec cargo test --test it -- --exact --nocapture \
  clusters::broker_cluster::relay_follow_keeps_every_acknowledged_checkin_when_its_node_that_leads_the_queues_dies

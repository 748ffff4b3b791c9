#!/usr/bin/env bash
# The whole test suite, against the real services (started first if they are not running),
# after `cargo fmt --check` and `cargo clippy -D warnings`.
# The examples (benchmarks) are built, so they cannot rot, but hold no tests: the suite runs the
# library's, the binary's and the integration tests last, so the run ends on their real count.
set -euo pipefail
cd "$(dirname "$0")/.."
# CI's broker is the suite's own: one short of file handles is restarted, not only named.
bash scripts/services.sh --fix-broker
# tests/it/clusters/redis_cluster.rs starts its own local Redis Cluster unless ATTENDANCE_TEST_REDIS_CLUSTER names
# one: it needs redis-server and redis-cli (Debian's redis-tools has both, and starts nothing).
if [ -z "${ATTENDANCE_TEST_REDIS_CLUSTER:-}" ] && ! command -v redis-cli >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools >/dev/null
  else
    echo "test: tests/it/clusters/redis_cluster.rs needs redis-server and redis-cli (Debian: redis-tools), or ATTENDANCE_TEST_REDIS_CLUSTER=redis+cluster://host:port,..." >&2
    exit 3
  fi
fi
# tests/it/clock.rs runs the binary with this host's clock moved (libfaketime: Debian's faketime).
if ! command -v faketime >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq faketime >/dev/null; } ||
      echo "test: could not install faketime; tests/it/clock.rs skips without it (and fails under CI)" >&2
  else
    echo "test: tests/it/clock.rs needs faketime (Debian: faketime); its tests skip without it" >&2
  fi
fi
bash scripts/build-deps.sh
# The rules docs/architecture.md states are held here, before the suite: formatting, and clippy
# with every warning an error (clippy.toml bans a bare println!/print!, lib.rs warns on
# unreachable_pub).
cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
cargo build --all-targets
cargo test --lib --bins --tests "$@"

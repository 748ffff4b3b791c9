#!/usr/bin/env bash
# The whole test suite, against the real services (started first if they are not running).
# The examples (benchmarks) are built, so they cannot rot, but hold no tests: the suite runs the
# library's, the binary's and the integration tests last, so the run ends on their real count.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh
cargo build --all-targets
cargo test --lib --bins --tests "$@"

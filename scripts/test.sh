#!/usr/bin/env bash
# The whole test suite, against the real services (started first if they are not running).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/services.sh
cargo test --all-targets "$@"
cargo test --doc

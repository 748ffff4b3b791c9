#!/usr/bin/env bash
# Fuzz the parsers of what people hand to attendance: the roster, a punch file, the config file.
# Each target runs for SECONDS (default 60); a crash leaves its input under fuzz/artifacts/<target>/
# and stops the script (exit 1): fix it and keep the input as a regression test.
#
#   bash scripts/fuzz.sh          # a minute each
#   bash scripts/fuzz.sh 3600     # the documented longer run: an hour each
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
# cargo fuzz passes the nightly-only sanitizer flags; the machine's one toolchain is stable,
# which accepts them under RUSTC_BOOTSTRAP.
export RUSTC_BOOTSTRAP=1
for t in roster punch_file config; do
  mkdir -p "fuzz/corpus/$t"
  echo "fuzz: $t for ${secs}s" >&2
  cargo fuzz run "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- -max_total_time="$secs" -rss_limit_mb=2048 -max_len=262144
done

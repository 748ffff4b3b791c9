#!/usr/bin/env bash
# Long runs of the simulated month (tests/it/month): seed after seed until HOURS are up, each a
# month of ATTENDANCE_MONTH_EMPLOYEES (default 250) in ATTENDANCE_MONTH_DEPARTMENTS (8) over
# ATTENDANCE_MONTH_DAYS (30) with faults on ATTENDANCE_MONTH_FAULT_RATE (0.15) of the commands,
# on a RabbitMQ node of its own when run as root (ATTENDANCE_MONTH_PRIVATE_BROKER=0: the shared one),
# and on a MariaDB of its own, which its faults kill (ATTENDANCE_MONTH_SHARED_MYSQL=1: the shared one).
# Each run's log is kept under target/soak/; at the end it prints every seed run, which failed
# (with the day and what differed) and the findings the runs printed. Exit 1 if a seed failed.
#
#   bash scripts/soak.sh 2          # two hours
#   bash scripts/soak.sh 0.5        # half an hour
#   ATTENDANCE_MONTH_SEED=42 cargo test --test it month::a_long -- --ignored --nocapture   # one seed again
set -euo pipefail
cd "$(dirname "$0")/.."
hours=${1:?usage: scripts/soak.sh HOURS}
end=$(( $(date +%s) + $(awk -v h="$hours" 'BEGIN { printf "%d", h * 3600 }') ))
out=target/soak/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
cargo test --test it --no-run -q
# As root the month runs on a RabbitMQ node of its own, which its faults may kill.
if [ "$(id -u)" = 0 ] && command -v rabbitmq-server >/dev/null 2>&1; then
  export ATTENDANCE_MONTH_PRIVATE_BROKER=${ATTENDANCE_MONTH_PRIVATE_BROKER:-1}
fi
runs=0; failed=0
while [ "$(date +%s)" -lt "$end" ]; do
  seed=${ATTENDANCE_MONTH_SEED_BASE:-$RANDOM$RANDOM$RANDOM}
  unset ATTENDANCE_MONTH_SEED_BASE
  runs=$((runs + 1))
  log="$out/seed-$seed.log"
  echo "soak: run $runs, seed $seed" >&2
  if ATTENDANCE_MONTH_SEED=$seed cargo test -q --test it month::a_long -- --ignored --nocapture >"$log" 2>&1; then
    echo "soak: seed $seed ok ($(grep -c '^month: day ' "$log") days)" >&2
  else
    failed=$((failed + 1))
    echo "soak: seed $seed FAILED:" >&2
    grep -m1 -A12 '^month seed' "$log" >&2 || tail -20 "$log" >&2
  fi
done
echo "soak: $runs seed(s) run, $failed failed; logs in $out"
echo "soak: findings (distinct lines):"
cat "$out"/*.log 2>/dev/null | grep -h '^month: finding' | sed 's/(seed [0-9]*, day [0-9]*)//' | sort | uniq -c | sort -rn | head -20 || true
echo "soak: MySQL kills, by seed:"
grep -H 'mysql_kills' "$out"/*.log 2>/dev/null | sed 's/.*seed-\([0-9]*\).log: */\1 /' || true
[ "$failed" -eq 0 ]

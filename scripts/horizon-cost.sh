#!/usr/bin/env bash
# What the re-publish horizon (amqp.republish_horizon_seconds) costs a bulk check-in and a
# one-off relay: the same 100,000 punches with the horizon at 10 s (the default) and at 0,
# alternating, each timed with its peak memory (GNU time). Uses the release build, a namespace
# and database of its own (horizon_cost), and removes them at the end, killed or not.
# Needs the broker's open-files limit raised first (scripts/services.sh): it declares 500 queues.
set -euo pipefail
cd "$(dirname "$0")/.."
B=target/release/attendance
[ -x "$B" ] || { echo "build it first: cargo build --release" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }
RUNS=${RUNS:-3}
export ATTENDANCE_NAMESPACE=horizon_cost
export ATTENDANCE_MYSQL_URL=mysql://root@127.0.0.1:3306/horizon_cost
dir=$(mktemp -d)
cleanup() {
  "$B" -q queues delete --yes >/dev/null 2>&1 || true
  redis-cli --scan --pattern 'horizon_cost*' | xargs -r -n 1000 redis-cli del >/dev/null
  mysql -uroot -h127.0.0.1 -e 'DROP DATABASE IF EXISTS horizon_cost'
  rm -rf "$dir"
}
trap cleanup EXIT
"$B" -q migrate
# Past days' punches, recorded without review (this run's own rulebook).
"$B" -q policy set policy.replay_window_minutes 5270400 --from 2000-01-01 --reason "past days"
"$B" -q policy set policy.max_backdate_days 3660 --from 2000-01-01 --reason "past days"
"$B" -q org generate --employees 100000 --departments 500 -o "$dir/roster.csv"
"$B" -q org import "$dir/roster.csv" >/dev/null
"$B" -q queues declare >/dev/null
day=0
file() { # a new past day each time, everyone checking in
  day=$((day + 1))
  local d; d=$(date -u -d "today - $((day + 7)) days" +%F)
  { echo "employee_id,kind,at"; tail -n +2 "$dir/roster.csv" | cut -d, -f1 | sed "s/\$/,in,${d}T08:30:00Z/"; } >"$dir/day.csv"
}
timed() { # horizon, command...
  local h=$1; shift
  ATTENDANCE_AMQP_REPUBLISH_HORIZON_SECONDS=$h /usr/bin/time -f "%e %M" -o "$dir/t" "$@" >"$dir/out"
  local sent; sent=$(grep -o '"sent":[0-9]*' "$dir/out" | head -1 | cut -d: -f2)
  awk -v h="$h" -v s="$sent" '{printf "horizon %2s s: %5.2f s, peak memory %4.0f MB, %s sent\n", h, $1, $2 / 1024, s}' "$dir/t"
}
echo "bulk check-in of 100,000 punches (checkin --file), broker up"
for _ in $(seq "$RUNS"); do
  for h in 10 0; do
    file; sleep 2
    timed "$h" "$B" checkin --file "$dir/day.csv" --json
    "$B" -q queues purge --yes >/dev/null
  done
done
echo "relay of 100,000 waiting events (left by a bulk check-in with the broker away)"
for _ in $(seq "$RUNS"); do
  for h in 10 0; do
    file
    ATTENDANCE_AMQP_URL='amqp://guest:guest@127.0.0.1:1/%2f' "$B" -q checkin --file "$dir/day.csv" >/dev/null 2>&1 || true
    sleep 2
    timed "$h" "$B" relay --json
    "$B" -q queues purge --yes >/dev/null
  done
done

#!/usr/bin/env bash
# The main job, end to end: a whole day for a company (100,000 employees in 500 departments by
# default). Starts any missing service, builds the release binary, then: migrate, roster, the
# day's boards, a realistic morning through bulk check-in, a supervisor's notifications, the
# evening's check-outs, the nightly settle and the day's report.
#
#   scripts/demo.sh [--employees N] [--departments N] [--no-services] [--fix-broker]
#   scripts/demo.sh --cleanup     # remove everything a demo made
#
# --employees N alone scales the departments with it: 200 employees a department, at least 1,
# at most 500. --no-services skips scripts/services.sh (the services are yours, named by the
# ATTENDANCE_* variables). A running broker is someone's: one short of file handles is only
# named, with what would change, unless --fix-broker lets scripts/services.sh restart it.
# ATTENDANCE_BIN runs that binary instead of building the release one (cargo's progress shows
# on stderr); --cleanup uses a binary already built in this checkout, or `attendance` on PATH.
# It works in its own namespace (DEMO_NAMESPACE, default demo) and database (DEMO_MYSQL_URL,
# default attendance_demo); the broker is ATTENDANCE_AMQP_URL's (default the local one). Every step is idempotent, so a second run redoes the same day and lands the
# same rows. The queues are declared right after the roster: a broker short of file handles for
# them refuses there (with amqp.management_url set), exit 3, before any is created. It cleans up
# after itself: the demo's notification queues are emptied at the end (also when a step fails or
# it is interrupted), so no backlog of ~200,000 messages outlives it and slows the next run.
# `--cleanup` removes the demo entirely: its queues, exchanges and queue policy, its Redis keys
# (<namespace>:*) and its database; the demo's last line says so.
set -euo pipefail
cd "$(dirname "$0")/.."

employees=100000
departments=
services=1
remove=
fix_broker=
while [ $# -gt 0 ]; do
  case $1 in
    --employees) employees=$2; shift 2 ;;
    --departments) departments=$2; shift 2 ;;
    --no-services) services=; shift ;;
    --fix-broker) fix_broker=--fix-broker; shift ;;
    --cleanup) remove=1; services=; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "demo: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $employees in ''|*[!0-9]*) echo "demo: --employees takes a number" >&2; exit 2 ;; esac
if [ -z "$departments" ]; then
  departments=$(( employees / 200 ))
  [ "$departments" -lt 1 ] && departments=1
  [ "$departments" -gt 500 ] && departments=500
fi

[ -n "$services" ] && bash scripts/services.sh $fix_broker
# Cargo puts its builds under CARGO_TARGET_DIR when that is set.
target=${CARGO_TARGET_DIR:-target}
att=
if [ -n "${ATTENDANCE_BIN:-}" ]; then
  att=$ATTENDANCE_BIN
elif [ -n "$remove" ]; then
  # Removing needs only `queues delete`: any build of this checkout does, no release build.
  for b in "$target/release/attendance" "$target/debug/attendance" "$(command -v attendance || true)"; do
    [ -n "$b" ] && [ -x "$b" ] && { att=$b; break; }
  done
fi
if [ -z "$att" ]; then
  echo "== building the release binary (a few minutes from a fresh clone on 2 cores; cargo's progress follows)" >&2
  cargo build --release --bins
  att=$target/release/attendance
fi

# Its own namespace and database whatever the shell's ATTENDANCE_NAMESPACE and
# ATTENDANCE_MYSQL_URL say (they may name a real company's); the services' other ATTENDANCE_*
# variables (ATTENDANCE_AMQP_URL, ATTENDANCE_REDIS_URL, ...) apply as to any command.
export ATTENDANCE_NAMESPACE=${DEMO_NAMESPACE:-demo}
export ATTENDANCE_MYSQL_URL=${DEMO_MYSQL_URL:-mysql://root@127.0.0.1:3306/attendance_demo}
export ATTENDANCE_TIMEZONE=${ATTENDANCE_TIMEZONE:-Europe/Paris}

# --cleanup: everything the demo made, in the order that still finds it (the queues are known
# from the roster, so they go before the database).
if [ -n "$remove" ]; then
  ns=$ATTENDANCE_NAMESPACE
  echo "== removing the demo (namespace $ns, database ${ATTENDANCE_MYSQL_URL##*/})" >&2
  $att queues delete --yes || echo "demo: the queues were not deleted (see above)" >&2
  redis_url=${ATTENDANCE_REDIS_URL:-redis://127.0.0.1:6379/}
  redis-cli -u "$redis_url" --scan --pattern "$ns:*" | xargs -r -n 500 redis-cli -u "$redis_url" unlink >/dev/null
  # The database, named by the URL mysql://USER[:PASSWORD]@HOST[:PORT]/DB[?...].
  url=${ATTENDANCE_MYSQL_URL#mysql://}; url=${url%%\?*}
  db=${url##*/}; server=${url%/*}; cred=; [ "$server" != "${server#*@}" ] && cred=${server%@*}
  hostport=${server##*@}; host=${hostport%:*}; port=3306; [ "$hostport" != "$host" ] && port=${hostport##*:}
  user=${cred%%:*}; pass=; [ "$cred" != "$user" ] && pass=${cred#*:}
  client=$(command -v mariadb || command -v mysql)
  MYSQL_PWD=$pass "$client" -h "$host" -P "$port" -u "${user:-root}" -e "DROP DATABASE IF EXISTS \`$db\`"
  echo "demo removed: queues, Redis keys $ns:*, database $db" >&2
  exit 0
fi

work=$(mktemp -d)
roster_loaded=
# The demo plays yesterday's whole day now, as a kiosk that was offline replays its punches: it
# signs with its own Ed25519 key, which the key registry lets replay (`keys add --replay`, the
# owner's word: a keyring file grants nothing), so none of its punches is held for review; the
# company's replay window stays as it is (docs/security.md, back-dating needs authority). The
# private key lives as long as the run: the file is private to it. It is made after `migrate`.
demo_key=
if [ -z "${ATTENDANCE_SIGNING_KEY_FILE:-}" ]; then
  demo_key=$work/kiosk.key
fi
done=
cleanup() {
  # The queues are known from the roster: only once it is imported can they be purged.
  if [ -n "$roster_loaded" ]; then
    echo >&2
    echo "== cleanup: emptying the demo's notification queues" >&2
    $att queues purge --yes || echo "demo: could not purge the demo queues (see above)" >&2
  fi
  rm -rf "$work"
  # The last line, after the cleanup's: how to remove what the demo made.
  [ -n "$done" ] && echo "to remove what the demo made (queues, Redis keys, database): scripts/demo.sh --cleanup (with the same DEMO_* variables)" >&2
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The last work day (Monday to Friday) before today, so that the whole day is in the past.
day=$(date -d yesterday +%F)
while [ "$(date -d "$day" +%u)" -gt 5 ]; do day=$(date -d "$day -1 day" +%F); done
started=$(date +%s)
step() { echo; echo "== $*" >&2; }

step "migrate"
$att migrate
if [ -n "$demo_key" ]; then
  rm -f "$demo_key"
  $att keys generate demo-kiosk --out "$demo_key" -q >"$work/kiosk.pub"
  # A rerun finds the key registered already: its own new key is registered under a fresh id.
  $att keys add demo-kiosk --public-key "$work/kiosk.pub" --replay -q 2>/dev/null || {
    id=demo-kiosk-$(date +%s)
    rm -f "$demo_key"
    $att keys generate "$id" --out "$demo_key" -q >"$work/kiosk.pub"
    $att keys add "$id" --public-key "$work/kiosk.pub" --replay -q
  }
  export ATTENDANCE_SIGNING_KEY_FILE=$demo_key
fi

step "roster: $employees employees in $departments departments"
$att org generate --employees "$employees" --departments "$departments" -o "$work/roster.csv"
$att org import "$work/roster.csv"
roster_loaded=1
# Every queue now, or a clear refusal: left to the check-ins, 500 queues on a broker short of
# file handles would jam it for all its users (docs/operations.md: RabbitMQ's file handles).
$att queues declare
# A run killed before its cleanup left its queues full: start from empty ones.
$att queues purge --yes

step "the day: $day (company zone $ATTENDANCE_TIMEZONE)"
$att init-day --date "$day"
$att leave add E000010 "$day" "$day" --kind sick --note "demo: a sick day"

step "morning: check-ins through bulk check-in"
$att simulate --date "$day" --phase morning -o "$work/morning.csv"
$att checkin --file "$work/morning.csv"

step "what the supervisor of D001 is told (first 10 events)"
$att watch-dept D001 --once | head -n 10 || true
$att status E000002 --date "$day"

step "evening: check-outs"
$att simulate --date "$day" --phase evening -o "$work/evening.csv"
$att checkin --file "$work/evening.csv"

step "the nightly settle"
$att settle --date "$day"

step "the day's report, and who was absent in D001"
# A line per department: with many, the first ones and the total, under the title and headers.
$att report day --date "$day" >"$work/day.txt"
rows=$(wc -l <"$work/day.txt")
if [ "$rows" -gt 16 ]; then
  head -n 9 "$work/day.txt"
  echo "│ ... $(( rows - 11 )) more departments"
  tail -n 2 "$work/day.txt"
else
  cat "$work/day.txt"
fi
$att report absent --date "$day" --dept D001

echo >&2
echo "demo done in $(( $(date +%s) - started ))s" >&2
done=1

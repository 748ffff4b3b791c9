#!/usr/bin/env bash
# CI: the .deb builds, installs, works and goes away cleanly, and its systemd units are hardened
# (an exposure of 4.0 or less in `systemd-analyze security --offline=yes`, no core dumps) and
# pass `systemd-analyze verify`; their metrics directory is made for them. Needs root (dpkg -i); leaves the machine as it found it: the
# package purged, and the `attendance` system user removed if this run made it.
#
#   scripts/deb-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_EXPOSURE=4.0
fail() { echo "deb-check: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "deb-check: needs root (dpkg -i into this machine)" >&2; exit 3; }
if dpkg -s attendance >/dev/null 2>&1; then
  echo "deb-check: a package named attendance is installed already; not touching it" >&2
  exit 3
fi
metrics_dir=/var/lib/prometheus/node-exporter
made_metrics=yes
[ -e "$metrics_dir" ] && made_metrics=no
made_user=yes
getent passwd attendance >/dev/null && made_user=no
cleanup() {
  dpkg --purge attendance >/dev/null 2>&1 || true
  if [ "$made_user" = yes ] && getent passwd attendance >/dev/null; then
    userdel attendance 2>/dev/null || true
    getent group attendance >/dev/null && groupdel attendance 2>/dev/null || true
  fi
}
trap cleanup EXIT

deb=$(bash scripts/deb.sh)
echo "deb-check: $deb ($(du -h "$deb" | cut -f1))" >&2
dpkg -i "$deb" >/dev/null
mapfile -t files < <(dpkg -L attendance | while read -r f; do [ -f "$f" ] && echo "$f"; done)

# What it installed works where an admin looks for it.
/usr/bin/attendance --version >&2
for page in attendance attendance-settle attendance-relay attendance-doctor; do
  man -w "$page" >/dev/null || fail "man $page: no page installed"
done
# Package hygiene, as lintian checks it: compressed man pages, a changelog, the JSON schemas.
uncompressed=$(dpkg -L attendance | grep '^/usr/share/man/.*\.1$' || true)
[ -z "$uncompressed" ] || fail "man pages not compressed: $uncompressed"
[ -s /usr/share/doc/attendance/changelog.Debian.gz ] || fail "no /usr/share/doc/attendance/changelog.Debian.gz"
[ -s /usr/share/doc/attendance/schema/checkin.json ] || fail "no JSON schemas in /usr/share/doc/attendance/schema"
zcat /usr/share/man/man1/attendance-settle.1.gz | grep -q '^\.SH EXAMPLES' || fail "man attendance-settle: no EXAMPLES"
for s in postinst prerm postrm; do
  ! grep -q '#DEBHELPER#' "/var/lib/dpkg/info/attendance.$s" 2>/dev/null || fail "$s: an unexpanded #DEBHELPER#"
done
dpkg-query -W -f='${Depends}\n' attendance | grep -qw adduser || fail "postinst uses adduser, not in Depends"
# lintian, where it is installed: no error, and every warning one named in docs/installing.md.
if command -v lintian >/dev/null 2>&1; then
  found=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -E '^[EW]: ' || true)
  named=$(sed -n 's/^| `\([a-z0-9-]*\)` |.*/\1/p' docs/installing.md)
  unnamed=$(grep -vwF -f <(printf '%s\n' $named) <<<"$found" || true)
  [ -z "$unnamed" ] || fail "lintian: $unnamed"
  echo "deb-check: lintian: no error or warning but those docs/installing.md names" >&2
else
  echo "deb-check: lintian not installed: not run" >&2
fi
for f in /usr/share/bash-completion/completions/attendance /usr/share/zsh/vendor-completions/_attendance \
  /usr/share/fish/vendor_completions.d/attendance.fish; do
  [ -s "$f" ] || fail "$f: missing or empty"
done
getent passwd attendance >/dev/null || fail "no system user attendance"
mode=$(stat -c '%a %U:%G' /etc/attendance/config.toml)
[ "$mode" = "640 root:attendance" ] || fail "/etc/attendance/config.toml is $mode, not 640 root:attendance"
dpkg-query -W -f='${Conffiles}\n' attendance | grep -q ' /etc/attendance/config.toml ' ||
  fail "/etc/attendance/config.toml is not a conffile"
# The example config is read as it is installed, by the units' user (no --config: found in /etc).
setpriv --reuid=attendance --regid=attendance --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent \
  /usr/bin/attendance config show >/dev/null ||
  fail "the installed example config is refused"

# The units' metrics directory: there, and the units' user may write it (postinst made it, or
# an existing one lets it).
if ! setpriv --reuid=attendance --regid=attendance --init-groups test -d "$metrics_dir" -a -w "$metrics_dir"; then
  [ "$made_metrics" = no ] || fail "postinst did not make $metrics_dir writable by attendance"
  echo "deb-check: warning: $metrics_dir is not writable by attendance (it was there before: not ours to change)" >&2
fi

# The settle unit's own command line, run as the unit runs it (its user, METRICS_DIR from the
# unit), on a database and namespace of this check's: exit 0 with its metrics file written; and
# with the metrics file unwritable, still exit 0 with a warning (the settle itself succeeded).
ns=debcheck$$
db_url=mysql://root@127.0.0.1:3306/att_debcheck_$$
unit_env=(ATTENDANCE_NAMESPACE="$ns" ATTENDANCE_MYSQL_URL="$db_url"
  ATTENDANCE_REDIS_URL="${ATTENDANCE_REDIS_URL:-redis://127.0.0.1:6379/}"
  ATTENDANCE_AMQP_URL="${ATTENDANCE_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/%2f}")
drop_db() {
  (mariadb -uroot -h127.0.0.1 -e "DROP DATABASE IF EXISTS att_debcheck_$$" 2>/dev/null || true)
  redis-cli -u "${ATTENDANCE_REDIS_URL:-redis://127.0.0.1:6379/}" --scan --pattern "$ns:*" 2>/dev/null |
    xargs -r redis-cli -u "${ATTENDANCE_REDIS_URL:-redis://127.0.0.1:6379/}" unlink >/dev/null 2>&1 || true
}
trap 'drop_db; cleanup' EXIT
env "${unit_env[@]}" /usr/bin/attendance -q migrate
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/attendance-settle.service)
unit_metrics=$(sed -n 's/^Environment=METRICS_DIR=//p' /lib/systemd/system/attendance-settle.service)
cmd=${exec_start//'${METRICS_DIR}'/$unit_metrics}
prom="$unit_metrics/attendance_settle.prom"
rm -f "$prom"
as_unit() { setpriv --reuid=attendance --regid=attendance --init-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent "${unit_env[@]}" $cmd; }
as_unit || fail "the settle unit's command ($cmd) failed as the unit runs it: exit $?"
grep -q '^attendance_settle_outcome{outcome="ok"} 1' "$prom" || fail "$prom: not written with outcome ok"
rm -f "$prom"
mode=$(stat -c %a "$unit_metrics")
chmod a-w "$unit_metrics"
said=$(as_unit 2>&1) || { chmod "$mode" "$unit_metrics"; fail "the settle unit's command failed when its metrics file could not be written: $said"; }
chmod "$mode" "$unit_metrics"
grep -q 'warning: --metrics-file .* not written' <<<"$said" || fail "no warning for the unwritten metrics file: $said"
echo "deb-check: the settle unit's command exits 0 as the unit runs it, metrics written, or a warning when they cannot be" >&2

# The units: hardened, and valid with the binary and man pages they name installed.
for unit in attendance-relay.service attendance-settle.service; do
  # No core dump: the processes hold the stores' passwords and the signing secret.
  grep -qx 'LimitCORE=0' "/lib/systemd/system/$unit" || fail "$unit: no LimitCORE=0"
  grep -qx "ReadWritePaths=-$metrics_dir" "/lib/systemd/system/$unit" || fail "$unit: may not write $metrics_dir"
  out=$(systemd-analyze security --offline=yes "/lib/systemd/system/$unit" 2>&1) || true
  level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' <<<"$out")
  [ -n "$level" ] || fail "$unit: no exposure level in systemd-analyze's output: $out"
  awk -v l="$level" -v m="$MAX_EXPOSURE" 'BEGIN { exit !(l <= m) }' || fail "$unit: exposure $level, above $MAX_EXPOSURE"
  echo "deb-check: $unit exposure $level (at most $MAX_EXPOSURE)" >&2
done
verify=$(systemd-analyze verify /lib/systemd/system/attendance-relay.service \
  /lib/systemd/system/attendance-settle.service /lib/systemd/system/attendance-settle.timer 2>&1) ||
  fail "systemd-analyze verify: $verify"
[ -z "$verify" ] || fail "systemd-analyze verify: $verify"
echo "deb-check: systemd-analyze verify passes" >&2

# Removed, then purged: nothing of it left.
dpkg -r attendance >/dev/null
[ -f /etc/attendance/config.toml ] || fail "dpkg -r removed the conffile (only --purge should)"
[ ! -e /usr/bin/attendance ] || fail "dpkg -r left /usr/bin/attendance"
dpkg --purge attendance >/dev/null
left=()
for f in "${files[@]}"; do [ -e "$f" ] && left+=("$f"); done
[ -e /etc/attendance ] && left+=(/etc/attendance)
[ "$made_metrics" = yes ] && [ -e "$metrics_dir" ] && left+=("$metrics_dir")
[ ${#left[@]} -eq 0 ] || fail "left after --purge: ${left[*]}"
! dpkg -s attendance >/dev/null 2>&1 || fail "dpkg still knows the package after --purge"
echo "deb-check: installed ${#files[@]} files, removed and purged cleanly" >&2

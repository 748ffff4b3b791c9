#!/usr/bin/env bash
# CI: `cargo deny check` of the dependency tree against deny.toml: advisories (RustSec), bans
# (wildcards, OpenSSL outside native-tls, duplicate versions as warnings), licenses, sources.
# Installs cargo-deny (`cargo install --locked`) when missing.
#
# The advisory database is fetched from GitHub. When that fails, the check says so on stderr
# and goes on, rather than failing CI on a machine without that network:
#   - with a copy fetched before (cargo-deny's db-path), advisories are checked against it, and
#     the line says how old it is;
#   - with none, advisories are NOT checked ("supply-chain: advisories not checked: ..."); bans,
#     licenses and sources still are. ATTENDANCE_REQUIRE_ADVISORIES=1 makes that a failure.
# The summary line says which: `supply-chain: cargo deny check ...: ok; advisories not checked`
# (or checked, and against what).
#
#   scripts/supply-chain.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo deny --version >/dev/null 2>&1; then
  echo "supply-chain: installing cargo-deny (cargo install --locked cargo-deny)" >&2
  cargo install --locked cargo-deny >&2
fi
checks=(bans licenses sources)
fetch=()
# What the summary line says of the advisories: CI's log is read by its last lines.
advisories="advisories not checked"
if fetched=$(cargo deny fetch db 2>&1); then
  checks=(advisories "${checks[@]}")
  advisories="advisories checked against a database fetched now"
else
  why=$(grep -m1 -iE 'error|fail|resolve' <<<"$fetched" || tail -n 1 <<<"$fetched")
  db=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/advisory-dbs/*/ 2>/dev/null | head -n 1 || true)
  if [ -n "$db" ]; then
    when=$(git -C "$db" log -1 --format=%cs 2>/dev/null || echo "an unknown date")
    echo "supply-chain: the advisory database could not be updated ($why); checking against the copy of $when" >&2
    checks=(advisories "${checks[@]}")
    fetch=(--disable-fetch)
    advisories="advisories checked against the copy of $when (not updated)"
  elif [ "${ATTENDANCE_REQUIRE_ADVISORIES:-0}" = 1 ]; then
    echo "supply-chain: the advisory database could not be fetched ($why) and ATTENDANCE_REQUIRE_ADVISORIES=1" >&2
    exit 3
  else
    echo "supply-chain: advisories not checked: the advisory database could not be fetched ($why) and no copy is here; checking bans, licenses and sources" >&2
  fi
fi
cargo deny --locked check "${fetch[@]}" "${checks[@]}"
echo "supply-chain: cargo deny check ${checks[*]}: ok; $advisories" >&2

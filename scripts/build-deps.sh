#!/usr/bin/env bash
# What compiling needs besides Rust: a C compiler, for ring (rustls's cryptography) and the other
# crates that build C. TLS is rustls throughout: no OpenSSL headers. Installed with apt-get when
# run as root; otherwise says what to install.
set -euo pipefail
if ! command -v cc >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >/dev/null
  else
    echo "build: building needs a C compiler (Debian: gcc)" >&2
    exit 3
  fi
fi

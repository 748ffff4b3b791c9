#!/usr/bin/env bash
# What compiling needs besides Rust: amqps:// is built on native-tls (OpenSSL), so its headers
# and pkg-config. Installed with apt-get when run as root; otherwise says what to install.
set -euo pipefail
if ! pkg-config --exists openssl 2>/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libssl-dev pkg-config >/dev/null
  else
    echo "build: building needs OpenSSL's headers and pkg-config (Debian: libssl-dev pkg-config)" >&2
    exit 3
  fi
fi

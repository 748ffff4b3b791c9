#!/usr/bin/env bash
# Make sure Redis, MariaDB/MySQL and RabbitMQ answer on their local ports; start what is missing.
# Order of preference: a service already running; Docker Compose (deploy/docker-compose.yml) when a
# Docker engine answers; otherwise the distribution's packages (Debian/Ubuntu, as root).
set -euo pipefail
cd "$(dirname "$0")/.."

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # name port seconds
  for _ in $(seq 1 "$3"); do up "$2" && return 0; sleep 1; done
  echo "services: $1 did not come up on 127.0.0.1:$2" >&2
  return 1
}

missing=()
up 6379 || missing+=(redis)
up 3306 || missing+=(mariadb)
up 5672 || missing+=(rabbitmq)
if [ ${#missing[@]} -gt 0 ]; then
  echo "services: starting ${missing[*]}" >&2

  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    docker compose -f deploy/docker-compose.yml up -d "${missing[@]}"
  else
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
      echo "services: ${missing[*]} not running; start them (see docs/operations.md: Services) or run this as root on Debian/Ubuntu" >&2
      exit 3
    fi
    declare -A pkg=([redis]=redis-server [mariadb]=mariadb-server [rabbitmq]=rabbitmq-server)
    need=()
    for s in "${missing[@]}"; do dpkg -s "${pkg[$s]}" >/dev/null 2>&1 || need+=("${pkg[$s]}"); done
    if [ ${#need[@]} -gt 0 ]; then
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    fi
    for s in "${missing[@]}"; do
      case $s in
        redis)
          mkdir -p /var/lib/redis /var/log/redis
          redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
            --dir /var/lib/redis --logfile /var/log/redis/ci.log ;;
        mariadb)
          mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
          start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ;;
        rabbitmq)
          # RabbitMQ 3.x reserves about 3 file handles per quorum queue and sizes its handle
          # cache from this limit: at 1024, some 300 department queues exhaust it and the broker
          # stops accepting connections. 500 departments need more.
          (ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"; rabbitmq-server -detached) ;;
      esac
    done
  fi

  up 6379 || wait_port Redis 6379 30
  up 3306 || wait_port MariaDB 3306 60
  up 5672 || wait_port RabbitMQ 5672 120
  # A fresh Debian MariaDB lets root in only through its socket: allow root over TCP without a
  # password, as the default URL expects (a local development server only).
  if command -v mariadb >/dev/null 2>&1 && ! mariadb -uroot -h127.0.0.1 -e 'SELECT 1' >/dev/null 2>&1; then
    mariadb -uroot -e "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('')" || true
  fi
  command -v rabbitmqctl >/dev/null 2>&1 && timeout 120 rabbitmqctl -q await_startup >/dev/null 2>&1 || true
  echo "services: Redis, MariaDB and RabbitMQ are up" >&2
fi

# A broker already running with a small open-files limit (ulimit -n 1024 gives RabbitMQ about 900
# handles) hangs new connections once ~300 quorum queues exist: one per department is 500. Raise
# the handle cache of a local broker that is too small; `rabbitmq-server` started above already
# has a large limit.
if command -v rabbitmqctl >/dev/null 2>&1; then
  limit=$(timeout 30 rabbitmqctl -q eval 'file_handle_cache:get_limit().' 2>/dev/null || echo 0)
  if [ "${limit:-0}" -lt 4096 ] 2>/dev/null; then
    timeout 30 rabbitmqctl -q eval 'file_handle_cache:set_limit(18000).' >/dev/null 2>&1 \
      && echo "services: raised RabbitMQ's file handle limit from $limit to 18000" >&2 || true
  fi
fi

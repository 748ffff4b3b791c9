#!/usr/bin/env bash
# Make sure Redis, MariaDB/MySQL and RabbitMQ answer on their local ports; start what is missing.
# Order of preference: a service already running; Docker Compose (deploy/docker-compose.yml) when a
# Docker engine answers; otherwise the distribution's packages (Debian/Ubuntu, as root).
# Redis is started durable (an append-only file fsynced every second, no eviction: see
# docs/durability.md); a running service is never restarted or reconfigured, only warned about.
set -euo pipefail
cd "$(dirname "$0")/.."

up() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # name port seconds
  for _ in $(seq 1 "$3"); do up "$2" && return 0; sleep 1; done
  echo "services: $1 did not come up on 127.0.0.1:$2" >&2
  return 1
}

# RabbitMQ 3.x needs about 3 file handles per quorum queue and sizes its handle cache from the
# process's open-files limit: 5,000 department queues need some 16,000. `rabbitmq-server
# -detached` run as root goes through `su`, whose PAM limits reset `ulimit -n` to 1024, so the
# broker is started as its own user directly, under the raised limit.
RABBIT_NOFILE=20000
start_rabbitmq() {
  local n=$RABBIT_NOFILE hard
  hard=$(ulimit -Hn)
  [ "$hard" != unlimited ] && [ "$hard" -lt "$n" ] && n=$hard
  if id rabbitmq >/dev/null 2>&1 && [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] && command -v setpriv >/dev/null 2>&1; then
    mkdir -p /var/lib/rabbitmq /var/log/rabbitmq
    chown rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
    (cd /var/lib/rabbitmq && ulimit -n "$n" && setpriv --reuid rabbitmq --regid rabbitmq --init-groups \
      env HOME=/var/lib/rabbitmq /usr/lib/rabbitmq/bin/rabbitmq-server -detached)
  else
    (ulimit -n "$n"; rabbitmq-server -detached)
  fi
}

# The open-files limit of the running local broker's Erlang VM, or nothing if it cannot be read.
rabbitmq_nofile() {
  local pid
  pid=$(timeout 30 rabbitmqctl -q eval 'os:getpid().' 2>/dev/null | tr -d '"') || return 0
  [ -r "/proc/$pid/limits" ] && awk '/Max open files/ {print $4}' "/proc/$pid/limits"
}

# Whether the broker on 5672 answers the AMQP handshake (a Connection.Start frame, type 1) within
# 10 s: a broker out of file handles keeps its port open and answers nothing, and every test that
# publishes would then wait out its timeout.
amqp_answers() {
  timeout 10 bash -c 'exec 3<>/dev/tcp/127.0.0.1/5672 && printf "AMQP\x00\x00\x09\x01" >&3 &&
    [ "$(head -c 1 <&3 | od -An -tx1 | tr -d " ")" = 01 ]' 2>/dev/null
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
          # The day's boards live here until settle: without the AOF a restart loses them.
          redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" \
            --appendonly yes --appendfsync everysec --maxmemory-policy noeviction \
            --dir /var/lib/redis --logfile /var/log/redis/ci.log ;;
        mariadb)
          mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null || true
          start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd ;;
        rabbitmq) start_rabbitmq ;;
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

# A running service is someone's: say what is wrong with it, never restart or reconfigure it.
# (Raising RabbitMQ's handle cache above the process's real limit, as `file_handle_cache:set_limit`
# does, makes classic queues crash with emfile instead of refusing cleanly: only a broker started
# under a higher `ulimit -n` has more handles.)
if ! amqp_answers; then
  echo "services: RabbitMQ on 127.0.0.1:5672 accepts connections but does not answer the AMQP handshake; restart it (see docs/operations.md: RabbitMQ's file handles)" >&2
  exit 3
fi
if command -v rabbitmqctl >/dev/null 2>&1; then
  nofile=$(rabbitmq_nofile || true)
  if [ -n "$nofile" ] && [ "$nofile" != unlimited ] && [ "$nofile" -lt 16384 ] 2>/dev/null; then
    echo "services: WARNING: the local RabbitMQ has an open-files limit of $nofile; 5,000 department queues need about 16000 (restart it under ulimit -n $RABBIT_NOFILE, see docs/operations.md: RabbitMQ's file handles)" >&2
  fi
fi
if command -v redis-cli >/dev/null 2>&1; then
  aof=$(timeout 5 redis-cli -p 6379 config get appendonly 2>/dev/null | sed -n 2p || true)
  policy=$(timeout 5 redis-cli -p 6379 config get maxmemory-policy 2>/dev/null | sed -n 2p || true)
  if [ "$aof" = no ] || { [ -n "$policy" ] && [ "$policy" != noeviction ]; }; then
    echo "services: WARNING: the local Redis runs with appendonly $aof, maxmemory-policy $policy: a restart or eviction can lose the day's boards (see docs/durability.md)" >&2
  fi
fi

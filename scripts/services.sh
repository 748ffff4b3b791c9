#!/usr/bin/env bash
# Make sure Redis, MariaDB/MySQL and RabbitMQ answer on their local ports; start what is missing.
# Order of preference: a service already running; Docker Compose (deploy/docker-compose.yml) when a
# Docker engine answers; otherwise the distribution's packages (Debian/Ubuntu, as root).
# Redis is started durable (an append-only file fsynced every second, no eviction: see
# docs/durability.md); a running service is never reconfigured, only warned about. A local
# RabbitMQ under an open-files limit too low for the department queues is named with what would
# change (a warning; the queues' own declaration refuses clearly when they do not fit), and one
# no longer answering the AMQP handshake stops the script (exit 3) with the command to run;
# with --fix-broker, run as root, either is restarted under the raised limit instead.
#
#   scripts/services.sh [--fix-broker]
# RABBITMQ_NODE_PORT and RABBITMQ_NODENAME (as rabbitmq-server and rabbitmqctl read them) pick
# another local node than the default rabbit@host on 5672.
set -euo pipefail
cd "$(dirname "$0")/.."

fix_broker=
case ${1:-} in
  '') ;;
  --fix-broker) fix_broker=1 ;;
  *) echo "services: unknown argument $1 (scripts/services.sh [--fix-broker])" >&2; exit 2 ;;
esac

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
# Below this the broker cannot hold 5,000 department queues (3 handles each, and room to spare).
RABBIT_NEED=16384
RABBIT_PORT=${RABBITMQ_NODE_PORT:-5672}
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
  pid=$(rabbitmq_pid)
  [ -n "$pid" ] || pid=$(timeout 30 rabbitmqctl -q eval 'os:getpid().' 2>/dev/null | tr -d '"') || return 0
  [ -r "/proc/$pid/limits" ] && awk '/Max open files/ {print $4}' "/proc/$pid/limits"
}

# Whether the broker on $RABBIT_PORT answers the AMQP handshake (a Connection.Start frame, type
# 1) within 10 s: a broker out of file handles keeps its port open and answers nothing, and every
# test that publishes would then wait out its timeout.
amqp_answers() {
  timeout 10 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "AMQP\x00\x00\x09\x01" >&3 &&
    [ "$(head -c 1 <&3 | od -An -tx1 | tr -d " ")" = 01 ]' _ "$RABBIT_PORT" 2>/dev/null
}

# The pid of the local Erlang VM listening on $RABBIT_PORT, or nothing: a broker in a container
# (docker-proxy holds the port) or one this user cannot see is not a local broker we can restart.
rabbitmq_pid() {
  local pid
  pid=$(ss -Hltnp "sport = :$RABBIT_PORT" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2)
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = beam.smp ] && echo "$pid"
  return 0
}

# Restart the local broker under the raised limit (why: $1), or stop with the command to run.
# A broker that still answers is stopped cleanly (a bounded `rabbitmqctl stop`); one that does not
# answer the handshake would not answer rabbitmqctl either, so it is killed (its durable queues
# come back with it: docs/operations.md, RabbitMQ's file handles).
restart_rabbitmq() {
  local why=$1 pid
  pid=$(rabbitmq_pid)
  if [ -z "$fix_broker" ]; then
    # Someone else's broker (a shared one, perhaps): say what would change, touch nothing.
    echo "services: RabbitMQ on 127.0.0.1:$RABBIT_PORT $why; --fix-broker (as root) would restart it under ulimit -n $RABBIT_NOFILE, stopping it for everyone using it (see docs/operations.md: RabbitMQ's file handles)" >&2
    [ "${2:-}" = answers ] && return 0
    exit 3
  fi
  if [ "$(id -u)" != 0 ] || [ -z "$pid" ] || ! command -v rabbitmqctl >/dev/null 2>&1; then
    echo "services: RabbitMQ on 127.0.0.1:$RABBIT_PORT $why; restart it under a raised open-files limit, as root: sudo rabbitmqctl stop; sudo bash scripts/services.sh --fix-broker (see docs/operations.md: RabbitMQ's file handles)" >&2
    exit 3
  fi
  echo "services: RabbitMQ on 127.0.0.1:$RABBIT_PORT $why; restarting it under ulimit -n $RABBIT_NOFILE" >&2
  if [ "${2:-}" = answers ]; then
    timeout 60 rabbitmqctl -q stop >/dev/null 2>&1 || true
  fi
  for _ in $(seq 1 30); do [ -d "/proc/$pid" ] || break; sleep 1; done
  if [ -d "/proc/$pid" ]; then
    kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 1 10); do [ -d "/proc/$pid" ] || break; sleep 1; done
  fi
  start_rabbitmq
  wait_port RabbitMQ "$RABBIT_PORT" 120
  timeout 120 rabbitmqctl -q await_startup >/dev/null 2>&1 || true
  if ! amqp_answers; then
    echo "services: RabbitMQ on 127.0.0.1:$RABBIT_PORT was restarted but does not answer the AMQP handshake (see docs/operations.md: RabbitMQ's file handles)" >&2
    exit 3
  fi
  echo "services: RabbitMQ restarted with an open-files limit of $(rabbitmq_nofile)" >&2
}

missing=()
up 6379 || missing+=(redis)
up 3306 || missing+=(mariadb)
up "$RABBIT_PORT" || missing+=(rabbitmq)
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
  up "$RABBIT_PORT" || wait_port RabbitMQ "$RABBIT_PORT" 120
  # A fresh Debian MariaDB lets root in only through its socket: allow root over TCP without a
  # password, as the default URL expects (a local development server only).
  if command -v mariadb >/dev/null 2>&1 && ! mariadb -uroot -h127.0.0.1 -e 'SELECT 1' >/dev/null 2>&1; then
    mariadb -uroot -e "ALTER USER root@localhost IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('')" || true
  fi
  command -v rabbitmqctl >/dev/null 2>&1 && timeout 120 rabbitmqctl -q await_startup >/dev/null 2>&1 || true
  echo "services: Redis, MariaDB and RabbitMQ are up" >&2
fi

# A running service is someone's: say what is wrong with it, never reconfigure it. (Raising
# RabbitMQ's handle cache above the process's real limit, as `file_handle_cache:set_limit` does,
# makes classic queues crash with emfile instead of refusing cleanly: only a broker started under
# a higher `ulimit -n` has more handles, so a broker short of them is restarted, or the script
# stops: a broker left at 1024 jams at the first few hundred quorum queues, for all its users.)
if ! amqp_answers; then
  restart_rabbitmq "accepts connections but does not answer the AMQP handshake (out of file handles?)" silent
fi
nofile=$(rabbitmq_nofile || true)
if [ -n "$nofile" ] && [ "$nofile" != unlimited ] && [ "$nofile" -lt "$RABBIT_NEED" ] 2>/dev/null; then
  restart_rabbitmq "has an open-files limit of $nofile; 5,000 department queues need about $RABBIT_NEED (some 300 exhaust 1024)" answers
fi
if command -v redis-cli >/dev/null 2>&1; then
  aof=$(timeout 5 redis-cli -p 6379 config get appendonly 2>/dev/null | sed -n 2p || true)
  policy=$(timeout 5 redis-cli -p 6379 config get maxmemory-policy 2>/dev/null | sed -n 2p || true)
  if [ "$aof" = no ] || { [ -n "$policy" ] && [ "$policy" != noeviction ]; }; then
    echo "services: WARNING: the local Redis runs with appendonly $aof, maxmemory-policy $policy: a restart or eviction can lose the day's boards (see docs/durability.md)" >&2
  fi
fi

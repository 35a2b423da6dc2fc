#!/usr/bin/env bash
# with-postgres.sh CMD [ARGS...]: runs CMD with a throwaway PostgreSQL 15.
#
# It initialises a cluster in a fresh temporary directory, starts it on a free
# port of 127.0.0.1 (fsync on, as in production), creates the database
# toolgate_test, exports
#
#   TOOLGATE_TEST_POSTGRES=postgres://postgres@127.0.0.1:PORT/toolgate_test?sslmode=disable
#
# runs CMD, then always stops the server and removes the directory. The exit
# status is CMD's.
#
#   - TOOLGATE_TEST_POSTGRES already set: CMD runs against that server as is.
#   - Binaries: PG_BINDIR, else /usr/lib/postgresql/15/bin, else the newest
#     /usr/lib/postgresql/*/bin; when none is there and we are root on
#     Debian/Ubuntu, apt-get installs postgresql-15 (or postgresql).
#   - As root the server runs as the OS user postgres (initdb refuses root);
#     otherwise as the current user.
#   - When no server can be had, a warning is printed and CMD runs without
#     the variable (the PostgreSQL tests then skip), except under CI=true,
#     where that is an error: CI must not skip them silently.
set -uo pipefail

if [[ $# -eq 0 ]]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi
if [[ -n "${TOOLGATE_TEST_POSTGRES:-}" ]]; then
	exec "$@"
fi

log() { echo "with-postgres: $*" >&2; }

# without REASON: run CMD without PostgreSQL, or fail under CI.
without() {
	if [[ "${CI:-}" == "true" ]]; then
		log "$1; CI=true, so this is an error"
		exit 1
	fi
	log "$1; running without PostgreSQL (its tests will skip)"
	if declare -F cleanup >/dev/null; then
		cleanup
		trap - EXIT
	fi
	exec "${CMD[@]}"
}

CMD=("$@")

# find_bindir prints the directory of initdb/pg_ctl, preferring version 15.
find_bindir() {
	if [[ -n "${PG_BINDIR:-}" && -x "$PG_BINDIR/initdb" ]]; then
		echo "$PG_BINDIR"
		return 0
	fi
	if [[ -x /usr/lib/postgresql/15/bin/initdb ]]; then
		echo /usr/lib/postgresql/15/bin
		return 0
	fi
	local v
	for v in $(ls /usr/lib/postgresql 2>/dev/null | sort -rn); do
		if [[ -x "/usr/lib/postgresql/$v/bin/initdb" ]]; then
			echo "/usr/lib/postgresql/$v/bin"
			return 0
		fi
	done
	return 1
}

BINDIR=$(find_bindir)
if [[ -z "$BINDIR" ]]; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		log "PostgreSQL not found; installing it with apt-get"
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get update -qq && { apt-get install -y -qq postgresql-15 || apt-get install -y -qq postgresql; }; } >&2
		BINDIR=$(find_bindir)
	fi
	[[ -n "$BINDIR" ]] || without "no PostgreSQL binaries (looked in /usr/lib/postgresql/*/bin)"
fi

# as_pg runs a command as the server's OS user.
if [[ $(id -u) -eq 0 ]]; then
	if ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /bin/sh postgres ||
			without "cannot create the OS user postgres"
	fi
	as_pg() { runuser -u postgres -- "$@"; }
else
	as_pg() { "$@"; }
fi

DIR=$(mktemp -d "${TMPDIR:-/tmp}/toolgate-pg.XXXXXX") || without "cannot create a temporary directory"
mkdir -p "$DIR/sock"
if [[ $(id -u) -eq 0 ]]; then
	chown -R postgres: "$DIR"
fi

STARTED=0
cleanup() {
	if [[ $STARTED -eq 1 ]]; then
		as_pg "$BINDIR/pg_ctl" -D "$DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
			as_pg "$BINDIR/pg_ctl" -D "$DIR/data" -m immediate stop >/dev/null 2>&1
	fi
	rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port prints a TCP port of 127.0.0.1 that nothing listens on now.
free_port() {
	if command -v python3 >/dev/null; then
		python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' && return 0
	fi
	local port
	for _ in $(seq 1 50); do
		port=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			return 0
		fi
	done
	return 1
}

if ! as_pg "$BINDIR/initdb" -D "$DIR/data" -U postgres -A trust -E UTF8 --no-locale --no-sync >"$DIR/initdb.log" 2>&1; then
	cat "$DIR/initdb.log" >&2
	without "initdb failed"
fi

# Another process may take the port between free_port and the start: try a
# few ports.
PORT=
for _ in 1 2 3 4 5; do
	PORT=$(free_port) || without "no free port"
	if as_pg "$BINDIR/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR/sock -c fsync=on -c max_connections=300" \
		start >/dev/null 2>&1; then
		STARTED=1
		break
	fi
done
if [[ $STARTED -ne 1 ]]; then
	cat "$DIR/server.log" >&2 2>/dev/null
	without "the server did not start"
fi

for _ in $(seq 1 60); do
	"$BINDIR/pg_isready" -q -h 127.0.0.1 -p "$PORT" && break
	sleep 0.5
done
"$BINDIR/pg_isready" -q -h 127.0.0.1 -p "$PORT" || without "the server does not answer on port $PORT"
as_pg "$BINDIR/createdb" -h 127.0.0.1 -p "$PORT" -U postgres toolgate_test || without "createdb failed"

export TOOLGATE_TEST_POSTGRES="postgres://postgres@127.0.0.1:$PORT/toolgate_test?sslmode=disable"
log "PostgreSQL $("$BINDIR/postgres" --version | awk '{print $3}') on 127.0.0.1:$PORT"

"${CMD[@]}"
exit $?

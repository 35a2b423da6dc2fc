#!/usr/bin/env bash
# Installs the third-party MCP servers that toolgate's tests run over stdio
# (the reference servers from npm) into .cache/npm of the repository, which
# git ignores. Idempotent: nothing is fetched when the pinned versions are
# there. Without npm it says so and exits 0 (the tests then skip, and fail
# under CI=true).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.cache/npm"
everything="@modelcontextprotocol/server-everything@2026.8.31"
filesystem="@modelcontextprotocol/server-filesystem@2026.8.31"

if ! command -v npm >/dev/null 2>&1; then
	echo "install-mcp-servers: npm is missing; install Node.js (npm) to run the third-party MCP server tests" >&2
	exit 0
fi

installed() { # name version
	local pkg="$dir/node_modules/$1/package.json"
	[[ -f $pkg ]] && grep -q "\"version\": \"$2\"" "$pkg"
}

if installed @modelcontextprotocol/server-everything 2026.8.31 &&
	installed @modelcontextprotocol/server-filesystem 2026.8.31; then
	exit 0
fi
echo "install-mcp-servers: installing $everything and $filesystem into .cache/npm" >&2
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$everything" "$filesystem" >&2

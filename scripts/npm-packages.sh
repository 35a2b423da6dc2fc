#!/usr/bin/env bash
# Installs the npm packages the tests read into .cache/npm (git-ignored),
# each at a pinned version; a package already there at that version is left
# alone. Add a line to PACKAGES for another one (MCP reference servers,
# documents): tests find them under .cache/npm/node_modules/<name>.
# Without npm it says so and exits 0: the tests that need a package skip,
# except under CI=true, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
	"@octokit/openapi@23.0.2" # GitHub's REST API description (config/openapi, export/sdkcheck)
)

if ! command -v npm >/dev/null 2>&1; then
	echo "npm-packages: npm is missing; install Node.js's npm to run the tests that read npm packages" >&2
	exit 0
fi

prefix=.cache/npm
mkdir -p "$prefix"
missing=()
for spec in "${PACKAGES[@]}"; do
	name=${spec%@*}
	version=${spec##*@}
	have=$(node -p "require('./$prefix/node_modules/$name/package.json').version" 2>/dev/null || true)
	[[ $have == "$version" ]] || missing+=("$spec")
done
if ((${#missing[@]})); then
	echo "npm-packages: installing ${missing[*]} into $prefix" >&2
	npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "${missing[@]}" >&2
fi

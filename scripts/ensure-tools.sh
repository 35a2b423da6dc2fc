#!/usr/bin/env bash
# Installs what the tests need when it is missing: Debian's Chromium for the
# dashboard test (driven by chromedp). As root it uses apt-get; otherwise it
# says what to install and the dashboard test skips (outside CI).
set -euo pipefail

have_chromium() { command -v chromium >/dev/null 2>&1 || [[ -x /usr/bin/chromium ]]; }

if ! have_chromium; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "ensure-tools: installing chromium (dashboard test)" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq chromium >&2
	else
		echo "ensure-tools: chromium is missing; install Debian's chromium package to run the dashboard test" >&2
	fi
fi

# The packaging test (packaging/): Podman runs the OCI image (with runc:
# crun refuses this kind of VM's cgroups), systemd-analyze verifies the unit,
# dpkg-deb reads the .deb.
need=()
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v runc >/dev/null 2>&1 || need+=(runc)
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
if ((${#need[@]})); then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "ensure-tools: installing ${need[*]} (packaging test)" >&2
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq "${need[@]}" >&2
	else
		echo "ensure-tools: ${need[*]} missing; the packaging test skips those parts (install them to run it)" >&2
	fi
fi

# npm packages the tests read: the reference MCP servers (execute/mcpcall's
# third-party tests) and GitHub's REST API description (toolsource/openapi).
bash "$(dirname "$0")/install-mcp-servers.sh" ||
	echo "ensure-tools: installing the npm packages failed; the tests that read them (execute/mcpcall's third-party servers, GitHub's OpenAPI description) will fail" >&2

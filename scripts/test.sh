#!/usr/bin/env bash
# test.sh: every test of the module with the race detector.
#
# The end-to-end packages (e2e: the real binary, the crash test, the
# replicas; bench/soak: the fault-injection soak) print counts that a reader
# of the build log wants to see: they run with -v, and their log is shown
# without the per-test chatter (whole when anything fails). Everything else
# runs as usual.
set -uo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
loud=()
for p in ./e2e ./bench/soak; do
	[[ -d $p ]] && loud+=("$p")
done
mapfile -t quiet < <($GO list ./... | grep -v -e '^github.com/toolgate/toolgate/e2e$' -e '/bench/soak$')

$GO test -race -count=1 -timeout 20m "${quiet[@]}"
status=$?

if ((${#loud[@]})); then
	log=$(mktemp)
	$GO test -race -count=1 -timeout 20m -v "${loud[@]}" >"$log" 2>&1
	loud_status=$?
	if ((loud_status != 0)); then
		cat "$log"
	else
		grep -Ev '^(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|SKIP)|PASS$|[[:space:]]+[[:alnum:]_]+_test\.go:[0-9]+:)' "$log"
	fi
	rm -f "$log"
	((status == 0)) && status=$loud_status
fi
exit $status

#!/usr/bin/env bash
# Runs "$@" with a throwaway PostgreSQL. Not wired yet: runs "$@" as is.
set -euo pipefail
exec "$@"

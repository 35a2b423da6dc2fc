#!/usr/bin/env bash
# Installs what the tests need when it is missing. Nothing to install yet.
set -euo pipefail

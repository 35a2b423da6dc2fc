#!/bin/sh
# Stops the service before its binary goes.
set -e
if [ -d /run/systemd/system ] && [ "$1" = "remove" ]; then
	systemctl disable --now toolgate.service >/dev/null || true
fi

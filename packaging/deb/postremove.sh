#!/bin/sh
# On purge, removes the user; the store in /var/lib/toolgate is kept (it is
# the audit trail): delete it by hand if you mean to.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
fi
if [ "$1" = "purge" ] && getent passwd toolgate >/dev/null; then
	deluser --system toolgate >/dev/null || true
fi

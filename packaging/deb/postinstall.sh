#!/bin/sh
# Gives the state directory to the toolgate user, and tells systemd about the
# unit (enabled, not started: the packaged config serves no tools yet).
set -e
install -d -m 0750 -o toolgate -g toolgate /var/lib/toolgate
chown root:toolgate /etc/toolgate/toolgate.yaml
chmod 0640 /etc/toolgate/toolgate.yaml
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null || true
	if [ "$1" = "configure" ] && [ -z "$2" ]; then
		systemctl enable toolgate.service >/dev/null || true
	else
		systemctl try-restart toolgate.service >/dev/null || true
	fi
fi

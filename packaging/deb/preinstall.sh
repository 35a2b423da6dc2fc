#!/bin/sh
# Creates the toolgate system user and group the unit runs as.
set -e
if ! getent group toolgate >/dev/null; then
	addgroup --system toolgate >/dev/null
fi
if ! getent passwd toolgate >/dev/null; then
	adduser --system --ingroup toolgate --home /var/lib/toolgate --no-create-home \
		--shell /usr/sbin/nologin --gecos "toolgate" toolgate >/dev/null
fi

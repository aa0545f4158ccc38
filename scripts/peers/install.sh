#!/usr/bin/env bash
# Installs the peer tools that scripts/peers/run.sh compares spate with, at
# pinned versions: ripgrep, jq and GNU time from Debian 12 (bookworm), and the
# DuckDB Python module from PyPI into a venv outside the repository.
#
# Idempotent: a second run only checks. Run as root on Debian 12.
#
#   bash scripts/peers/install.sh            # venv in /tmp/peers-venv
#   PEERS_VENV=/opt/peers bash scripts/peers/install.sh
#
# Debian removes superseded package versions from its mirrors after a
# security update; if a pinned version is gone, the script says so and
# installs the current one (set PEERS_STRICT=1 to fail instead). The
# versions installed are printed at the end: put them next to any table.
set -euo pipefail

RIPGREP_VERSION=13.0.0-4+b2
JQ_VERSION=1.6-2.1+deb12u3
TIME_VERSION=1.9-0.2
DUCKDB_VERSION=2.0.0
VENV=${PEERS_VENV:-/tmp/peers-venv}
PY=${PYTHON:-python3}

export DEBIAN_FRONTEND=noninteractive

installed() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; }

apt_updated=0
apt_pin() { # name version
	local name=$1 want=$2 have
	have=$(installed "$name")
	[[ $have == "$want" ]] && return 0
	if [[ $apt_updated == 0 ]]; then
		apt-get update -qq
		apt_updated=1
	fi
	if apt-cache show "$name=$want" >/dev/null 2>&1; then
		apt-get install -y -qq --allow-downgrades "$name=$want" >/dev/null
	elif [[ ${PEERS_STRICT:-0} == 1 ]]; then
		echo "install.sh: $name=$want is not available from apt" >&2
		exit 1
	else
		echo "install.sh: $name=$want is not available; installing the current $name" >&2
		apt-get install -y -qq "$name" >/dev/null
	fi
}

apt_pin ripgrep "$RIPGREP_VERSION"
apt_pin jq "$JQ_VERSION"
apt_pin time "$TIME_VERSION"

if [[ ! -x $VENV/bin/python ]]; then
	if ! "$PY" -m venv "$VENV" 2>/dev/null; then
		# Debian's python3 needs python3-venv for "python3 -m venv".
		if [[ $apt_updated == 0 ]]; then apt-get update -qq; fi
		apt-get install -y -qq python3-venv >/dev/null
		rm -rf "$VENV"
		"$PY" -m venv "$VENV"
	fi
fi
if [[ $("$VENV/bin/python" -c 'import duckdb; print(duckdb.__version__)' 2>/dev/null || true) != "$DUCKDB_VERSION" ]]; then
	"$VENV/bin/pip" install -q --disable-pip-version-check "duckdb==$DUCKDB_VERSION"
fi

echo "ripgrep   $(installed ripgrep)   ($(rg --version | head -1))"
echo "jq        $(installed jq)   ($(jq --version))"
echo "time      $(installed time)   (/usr/bin/time)"
echo "duckdb    $("$VENV/bin/python" -c 'import duckdb; print(duckdb.__version__)')   (python $("$VENV/bin/python" -c 'import platform; print(platform.python_version())'), venv $VENV)"

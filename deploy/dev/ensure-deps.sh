#!/usr/bin/env bash
# ensure-deps.sh installs, from Debian packages, what the tests need and the
# machine lacks:
#
#   mariadbd                           -> mariadb-server
#   /usr/share/zookeeper/bin/zkServer.sh -> zookeeper (brings Java)
#   /usr/bin/chromium                  -> chromium
#   promtool                           -> prometheus (checks the /metrics text)
#
# It prints one line, "deps: ok", when everything is present. It does not
# start any server: the test fixtures (deploy/dev/testenv) use 127.0.0.1:3306 if a
# MariaDB answers there and start private servers otherwise.
#
# Used by `make test`. Needs root or sudo when something is missing.
set -euo pipefail

missing=()

if ! command -v mariadbd >/dev/null 2>&1 && [[ ! -x /usr/sbin/mariadbd ]]; then
	missing+=(mariadb-server)
fi
if [[ ! -x /usr/share/zookeeper/bin/zkServer.sh ]]; then
	missing+=(zookeeper)
fi
if [[ ! -x /usr/bin/chromium ]]; then
	missing+=(chromium)
fi
if ! command -v promtool >/dev/null 2>&1; then
	missing+=(prometheus)
fi

if ((${#missing[@]} == 0)); then
	echo "deps: ok"
	exit 0
fi

echo "deps: installing ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: apt-get not found; install ${missing[*]} (or equivalents) by hand" >&2
	exit 1
fi

sudo=()
if ((EUID != 0)); then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "deps: need root to install ${missing[*]}; run as root or install sudo" >&2
		exit 1
	fi
	sudo=(sudo)
fi

# Wait for another apt/dpkg run (unattended upgrades, a parallel install)
# instead of failing on its lock.
apt_opts=(-o DPkg::Lock::Timeout=600 -q)

"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}"

echo "deps: installed ${missing[*]}"

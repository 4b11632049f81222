#!/usr/bin/env bash
# ensure-deps.sh installs, from Debian packages, what the tests need and the
# machine lacks:
#
#   mariadbd                           -> mariadb-server
#   /usr/share/zookeeper/bin/zkServer.sh -> zookeeper (brings Java)
#   /usr/bin/chromium                  -> chromium
#   promtool                           -> prometheus (checks the /metrics text)
#   pg_ctlcluster, a PostgreSQL server -> postgresql
#   slapd                              -> slapd (an LDAP server per test)
#   ldapadd, ldapmodify                -> ldap-utils
#
# It prints one line, "deps: ok", when everything is present. The test
# fixtures (deploy/dev/testenv) use 127.0.0.1:3306 if a MariaDB answers there
# and start private servers otherwise; for PostgreSQL they use the machine's
# server at 127.0.0.1:5432 as user postgres, which this script starts when
# it is installed but stopped (pg_ctlcluster), and installs when missing
# (then it lets user postgres in from 127.0.0.1 without a password, as the
# fixtures expect; SHARDJOB_TEST_POSTGRES_DSN names another server).
#
# The LDAP fixture (testenv.StartLDAP) only runs the slapd binary with a
# configuration of its own; it never uses the machine's LDAP service. slapd is
# therefore installed with debconf's "omit server configuration" answer: no
# database and no /etc/ldap/slapd.d are created, nothing prompts, and the
# packaged service has nothing to serve (on machines with a policy-rc.d, such
# as containers, it is not even started).
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

if ! command -v slapd >/dev/null 2>&1 && [[ ! -x /usr/sbin/slapd ]]; then
	missing+=(slapd)
fi
if ! command -v ldapadd >/dev/null 2>&1; then
	missing+=(ldap-utils)
fi

pg_missing=0
if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
	missing+=(postgresql)
	pg_missing=1
fi

# start_postgres starts every stopped PostgreSQL cluster of the machine
# (Debian's: pg_lsclusters lists them), unless SHARDJOB_TEST_POSTGRES_DSN
# names a server of its own.
start_postgres() {
	if [[ -n "${SHARDJOB_TEST_POSTGRES_DSN:-}" ]] || ! command -v pg_lsclusters >/dev/null 2>&1; then
		return 0
	fi
	local ver name port status
	while read -r ver name port status _; do
		[[ "$ver" =~ ^[0-9]+$ ]] || continue
		if [[ "$status" != online* ]]; then
			echo "deps: starting PostgreSQL $ver/$name (port $port)"
			"${sudo[@]}" pg_ctlcluster "$ver" "$name" start
		fi
	done < <(pg_lsclusters --no-header 2>/dev/null || true)
}

# trust_local_postgres lets user postgres in from 127.0.0.1 without a
# password on the clusters this script just installed (their pg_hba.conf
# is new), and reloads them.
trust_local_postgres() {
	local hba
	for hba in /etc/postgresql/*/*/pg_hba.conf; do
		[[ -f "$hba" ]] || continue
		if ! grep -q '^host all postgres 127.0.0.1/32 trust' "$hba"; then
			"${sudo[@]}" sed -i '1i host all postgres 127.0.0.1/32 trust' "$hba"
		fi
	done
	pg_lsclusters --no-header | while read -r ver name _; do
		"${sudo[@]}" pg_ctlcluster "$ver" "$name" reload || true
	done
}

sudo=()
if ((EUID != 0)) && command -v sudo >/dev/null 2>&1; then
	sudo=(sudo)
fi

if ((${#missing[@]} == 0)); then
	start_postgres
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
if [[ " ${missing[*]} " == *" slapd "* ]]; then
	# No prompt, and no configuration or database for the machine's own
	# slapd service: the tests start private servers.
	echo "slapd slapd/no_configuration boolean true" | "${sudo[@]}" debconf-set-selections
fi
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y --no-install-recommends "${missing[@]}"

if ((pg_missing)); then
	trust_local_postgres
fi
start_postgres
echo "deps: installed ${missing[*]}"

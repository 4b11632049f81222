// Package testenv provides the fixtures the tests of this module share:
// MySQL databases, ZooKeeper servers, private MariaDB and ZooKeeper servers
// that chaos tests may stop, kill and restart, binaries built from the
// module, and processes started from them. It lives beside the developer
// scripts (deploy/dev) because the tests of every part use it (the SDK's as
// well as the admin's and the executor's), and it is for tests only:
// production code must not import it (a test in this package checks that
// no non-test file does).
//
// # Setup
//
// A package using the shared fixtures (MySQL, MySQLServer, ZooKeeper,
// BuildBinary) calls Main from TestMain, which stops every process this
// package started once the tests ended:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
// or, to also check for leaked goroutines after the servers were stopped:
//
//	func TestMain(m *testing.M) { goleak.VerifyTestMain(testenv.Wrap(m)) }
//
// Those fixtures fail the test with this hint when Main is missing. Private
// servers and processes (StartMariaDB, StartZooKeeper, StartProcess) are
// owned by one test and stopped by its t.Cleanup; they work without Main,
// but StartMariaDB is faster with it.
//
// Missing software is installed by deploy/dev/ensure-deps.sh (Debian:
// mariadb-server, zookeeper, chromium, postgresql, slapd, ldap-utils).
//
// # Fixtures
//
// MySQL(t) creates an empty database sjt_<package>_<random> and returns a
// go-sql-driver DSN for it (parseTime=true&loc=UTC&multiStatements=true);
// the database is dropped when the test ends. Tests may run in parallel: each
// has its own database. The server is chosen once per test process:
// SHARDJOB_TEST_MYSQL_DSN, else root without password at 127.0.0.1:3306 if it
// answers within 2s, else a private mariadbd started for the process.
// MySQLServer(t) returns the server DSN for tests that create databases
// themselves.
//
// ZooKeeper(t) returns the address of a ZooKeeper server shared by the tests
// of the process: SHARDJOB_TEST_ZK, else a private standalone server (tickTime
// 500ms, minSessionTimeout 1000ms, all four-letter words allowed, admin
// server off, -Xmx256m). ZKChroot(t) returns a unique path to keep a test's
// znodes apart from the others'.
//
// StartMariaDB(t) and StartZooKeeper(t) start servers the test owns: on their
// own free port on 127.0.0.1, with their own data directory, which survives
// Stop/Kill and Start. They are never the machine's servers.
//
// StartLDAP(t, users...) starts a private OpenLDAP server (slapd) the test
// owns, with its users and groups, a read-only service account, the memberof
// overlay, and LDAPS and StartTLS with a CA made for it; see LDAP.
// StartOIDCProvider(t, cfg) runs the test OpenID Connect provider of
// oidcprovider (zitadel/oidc's op, built once per test process) for the
// calling test: discovery, JWKS, the code flow with PKCE, refresh and
// end_session on a free loopback port, a login form, and levers for the
// negative tests (SetGroups, DisableUser, RotateKey, NextToken with a
// Misbehaviour such as TokenExpired or TokenWrongAudience).
//
// BuildBinary(t, pkg) builds a main package once per test process (with
// -race when the test binary has it), StartProcess(t, bin, args, env) runs it
// and captures its output; Process.WaitForLine waits for a line without
// polling. WaitFor polls a condition with backoff for the cases where no
// signal exists; FreePort returns an unused port; Chromium returns the
// browser or skips the test (fails it when CI=true).
//
// # Processes
//
// Every process the package starts is recorded in a registry from start until
// it was reaped, and only recorded processes are ever signalled. Each runs in
// its own process group, so that Kill also ends the children it forked, and
// gets SIGKILL from the kernel if the test process dies without cleaning up.
// Stop sends SIGTERM and, after a deadline, SIGKILL. Server output goes to
// log files in the server's directory; when a server does not start, or a
// test fails, the last lines of the log are reported.
//
// A server's life cycle: Start (wait until ready: MariaDB answers a ping,
// ZooKeeper answers ruok with imok and reports a mode in srvr) -> running ->
// Stop or Kill -> stopped -> Start again on the same port and data. Start
// on a running server and Kill on a stopped one are errors; Stop on a
// stopped one is not.
//
// # Environment
//
//	SHARDJOB_TEST_MYSQL_DSN     server DSN without database, e.g.
//	                            "root:pw@tcp(db:3306)/"; "private" forces a
//	                            private mariadbd
//	SHARDJOB_TEST_ZK            host:port of a ZooKeeper server to use instead
//	                            of a private one
//	SHARDJOB_TEST_KEEP=1        keep databases and server directories and log
//	                            where they are
//	SHARDJOB_TEST_ZK_CLASSPATH  ZooKeeper classpath when it is not Debian's
//	                            package (/usr/share/java/zookeeper.jar)
//	CI=true                     a missing Chromium fails instead of skipping
package testenv

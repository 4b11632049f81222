package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// machineMySQL is the server tried when SHARDJOB_TEST_MYSQL_DSN is unset.
const machineMySQL = "127.0.0.1:3306"

// MySQL creates a new, empty database named sjt_<package>_<random> for the
// calling test and returns a go-sql-driver DSN for it, with
// parseTime=true&loc=UTC&multiStatements=true. The database is dropped when
// the test ends, unless SHARDJOB_TEST_KEEP=1.
//
// The server is chosen once per test process (see MySQLServer). Close the
// *sql.DB opened on the DSN in a t.Cleanup registered after calling MySQL
// (cleanups run last-in first-out), or the DROP may wait for its locks.
func MySQL(t testing.TB) string {
	t.Helper()
	s := mysqlServerFor(t, "testenv.MySQL")
	name, err := randomName("sjt_"+packageName()+"_", 6)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		t.Fatalf("testenv: create database %s on %s: %v", name, s.source, err)
	}
	t.Cleanup(func() {
		if keep() {
			t.Logf("testenv: %s=1: keeping database %s on %s", EnvKeep, name, s.source)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Errorf("testenv: drop database %s on %s: %v (is a transaction of the test still open?)", name, s.source, err)
		}
	})
	cfg := s.cfg.Clone()
	cfg.DBName = name
	return formatDSN(cfg)
}

// MySQLServer returns the DSN of the server MySQL uses, without a database
// (same parameters as MySQL), for tests that create databases themselves;
// dropping them is then up to the test.
//
// The server is chosen once per test process, in this order:
//  1. SHARDJOB_TEST_MYSQL_DSN, a server DSN without database name; the
//     special value "private" skips to 3;
//  2. root without password at 127.0.0.1:3306, if it answers a ping within 2s;
//  3. a private mariadbd started for this test process (see StartMariaDB),
//     stopped by Main.
func MySQLServer(t testing.TB) string {
	t.Helper()
	return formatDSN(mysqlServerFor(t, "testenv.MySQLServer").cfg.Clone())
}

type mysqlServer struct {
	cfg    *mysql.Config // server level: no database
	admin  *sql.DB       // creates and drops the databases
	source string        // where the server came from, for messages
}

var sharedMySQL lazy[*mysqlServer]

func mysqlServerFor(t testing.TB, what string) *mysqlServer {
	t.Helper()
	requireMain(t, what) // the admin pool, and maybe a server, live until Main ends
	s, err := sharedMySQL.get(func() (*mysqlServer, error) { return chooseMySQL(t) })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func chooseMySQL(t testing.TB) (*mysqlServer, error) {
	ctx := context.Background()
	switch v := strings.TrimSpace(os.Getenv(EnvMySQLDSN)); v {
	case "private":
	case "":
		cfg := mysql.NewConfig()
		cfg.User = "root"
		cfg.Net = "tcp"
		cfg.Addr = machineMySQL
		err := pingMySQL(ctx, formatDSN(cfg.Clone()), 2*time.Second)
		if err == nil {
			return newMySQLServer(cfg, machineMySQL)
		}
		t.Logf("testenv: no usable MySQL server at %s as root without password (%v); starting a private mariadbd", machineMySQL, err)
	default:
		cfg, err := mysql.ParseDSN(v)
		if err != nil {
			return nil, fmt.Errorf("testenv: %s=%q is not a go-sql-driver DSN: %w", EnvMySQLDSN, v, err)
		}
		if cfg.DBName != "" {
			return nil, fmt.Errorf("testenv: %s names database %q; it must name only the server (user:password@tcp(host:port)/), the tests create their databases",
				EnvMySQLDSN, cfg.DBName)
		}
		if err := pingMySQL(ctx, formatDSN(cfg.Clone()), 5*time.Second); err != nil {
			return nil, fmt.Errorf("testenv: the server in %s (%s) does not answer: %w", EnvMySQLDSN, cfg.Addr, err)
		}
		return newMySQLServer(cfg, EnvMySQLDSN+" ("+cfg.Addr+")")
	}

	pdir, err := processDir()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(pdir, "mariadb")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	start := time.Now()
	m, err := newMariaDB(dir, nil)
	if err != nil {
		return nil, err
	}
	onTeardown(m.Stop) // runs after the admin pool below was closed
	t.Logf("testenv: private mariadbd for the tests of this process on %s (pid %d, started in %s, dir %s)",
		m.Addr(), m.PID(), time.Since(start).Round(time.Millisecond), dir)
	cfg, err := mysql.ParseDSN(m.DSN(""))
	if err != nil {
		return nil, err
	}
	return newMySQLServer(cfg, "private mariadbd "+m.Addr())
}

func newMySQLServer(cfg *mysql.Config, source string) (*mysqlServer, error) {
	adminCfg := cfg.Clone()
	// A test that leaves a transaction open would make DROP DATABASE wait
	// for a day; fail the drop after 10s instead.
	params := map[string]string{"lock_wait_timeout": "10"}
	for k, v := range cfg.Params {
		params[k] = v
	}
	adminCfg.Params = params
	connector, err := mysql.NewConnector(adminCfg)
	if err != nil {
		return nil, err
	}
	admin := sql.OpenDB(connector)
	onTeardown(admin.Close)
	return &mysqlServer{cfg: cfg, admin: admin, source: source}, nil
}

// randomName returns prefix followed by n random bytes in hex.
func randomName(prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("testenv: random name: %w", err)
	}
	return prefix + hex.EncodeToString(b), nil
}

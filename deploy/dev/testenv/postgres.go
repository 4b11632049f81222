package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// machinePostgres is the server tried when SHARDJOB_TEST_POSTGRES_DSN is
// unset: the machine's PostgreSQL, superuser postgres, trust auth
// (deploy/dev/ensure-deps.sh starts or installs it).
const machinePostgres = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Postgres creates a new, empty database named sjt_<package>_<random> for
// the calling test on the PostgreSQL server and returns a URL DSN for it
// (postgres://…/name?sslmode=disable). The database is dropped when the
// test ends (WITH (FORCE): connections left open are ended), unless
// SHARDJOB_TEST_KEEP=1.
//
// The server is chosen once per test process: SHARDJOB_TEST_POSTGRES_DSN, a
// URL of the server's maintenance database (the tests create theirs next to
// it), or else the machine's at 127.0.0.1:5432 as user postgres. A test
// fails with what to do when neither answers.
func Postgres(t testing.TB) string {
	t.Helper()
	return postgresDatabase(t, "")
}

// PostgresFromTemplate is Postgres with the schema and rows of a template:
// the new database is CREATE DATABASE … TEMPLATE of a database of key,
// which fill (given its DSN) builds once per test process; Main drops the
// template. PostgreSQL copies the template's files, which costs a fraction
// of running the platform's migrations again.
func PostgresFromTemplate(t testing.TB, key string, fill func(dsn string) error) string {
	t.Helper()
	s := postgresServerFor(t, "testenv.PostgresFromTemplate")
	postgresTemplates.mu.Lock()
	l := postgresTemplates.byKey[key]
	if l == nil {
		l = new(lazy[string])
		postgresTemplates.byKey[key] = l
	}
	postgresTemplates.mu.Unlock()
	tpl, err := l.get(func() (string, error) { return buildPostgresTemplate(t, s, key, fill) })
	if err != nil {
		t.Fatal(err)
	}
	return postgresDatabase(t, tpl)
}

var postgresTemplates = struct {
	mu    sync.Mutex
	byKey map[string]*lazy[string]
}{byKey: map[string]*lazy[string]{}}

// postgresDatabase creates the test's database, a copy of template when it
// is not "".
func postgresDatabase(t testing.TB, template string) string {
	t.Helper()
	s := postgresServerFor(t, "testenv.Postgres")
	name, err := randomName("sjt_"+strings.ToLower(packageName())+"_", 6)
	if err != nil {
		t.Fatal(err)
	}
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("testenv: create database %s on %s: %v", name, s.source, err)
	}
	t.Cleanup(func() {
		if keep() {
			t.Logf("testenv: %s=1: keeping database %s on %s", EnvKeep, name, s.source)
			return
		}
		if err := s.drop(name); err != nil {
			t.Errorf("testenv: drop database %s on %s: %v", name, s.source, err)
		}
	})
	return s.dsn(name)
}

// buildPostgresTemplate creates the template database of key and fills
// it; Main drops it.
func buildPostgresTemplate(t testing.TB, s *postgresServer, key string, fill func(dsn string) error) (string, error) {
	name, err := randomName("sjt_"+strings.ToLower(packageName())+"_tpl_", 4)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("testenv: create template database %s on %s: %w", name, s.source, err)
	}
	onTeardown(func() error {
		if keep() {
			return nil
		}
		return s.drop(name)
	})
	start := time.Now()
	if err := fill(s.dsn(name)); err != nil {
		return "", fmt.Errorf("testenv: fill template %q (%s): %w", key, name, err)
	}
	t.Logf("testenv: template %q is PostgreSQL database %s (built in %s): tests copy it", key, name, time.Since(start).Round(time.Millisecond))
	return name, nil
}

type postgresServer struct {
	url    *url.URL // the maintenance database's URL
	admin  *sql.DB  // creates and drops the databases
	source string   // where the server came from, for messages
}

// dsn is the URL of database name on the server.
func (s *postgresServer) dsn(name string) string {
	u := *s.url
	u.Path = "/" + name
	return u.String()
}

// drop drops database name, ending the connections still open to it.
func (s *postgresServer) drop(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	return err
}

var sharedPostgres lazy[*postgresServer]

func postgresServerFor(t testing.TB, what string) *postgresServer {
	t.Helper()
	requireMain(t, what)
	s, err := sharedPostgres.get(choosePostgres)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func choosePostgres() (*postgresServer, error) {
	dsn, source := machinePostgres, "127.0.0.1:5432"
	if v := strings.TrimSpace(os.Getenv(EnvPostgresDSN)); v != "" {
		dsn, source = v, EnvPostgresDSN
	}
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("testenv: %s=%q is not a postgres:// URL", EnvPostgresDSN, dsn)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("testenv: PostgreSQL DSN %q: %w", dsn, err)
	}
	admin := stdlib.OpenDB(*cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		_ = admin.Close()
		return nil, fmt.Errorf("testenv: no PostgreSQL server answers at %s (%v): run `make deps` (deploy/dev/ensure-deps.sh starts or installs Debian's postgresql), or set %s to a server's URL",
			source, err, EnvPostgresDSN)
	}
	admin.SetMaxOpenConns(4)
	onTeardown(admin.Close)
	return &postgresServer{url: u, admin: admin, source: source}, nil
}

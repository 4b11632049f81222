package testenv

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// MySQLFromTemplate is MySQL with the tables and rows of a template: the
// new database (dropped when the test ends, as MySQL's) holds a copy of
// every table of the template database of key, which fill (given its DSN)
// builds once per test process; Main drops the template.
//
// It is for a schema most tests need, such as the platform's migrated
// database: copying its tables costs a fraction of building it again (the
// store's 29 migrations took 14.5 s on a loaded 2-core machine, a copy of
// their 26 tables 0.8 s). The copy has the template's columns, indexes and
// rows (CREATE TABLE … LIKE, then INSERT … SELECT); it has no foreign keys,
// views or triggers, which a template must therefore not rely on.
func MySQLFromTemplate(t testing.TB, key string, fill func(dsn string) error) string {
	t.Helper()
	tpl, err := mysqlTemplateFor(t, key, fill)
	if err != nil {
		t.Fatal(err)
	}
	dsn := MySQL(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("testenv: open %s: %v", dsn, err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, table := range tpl.tables {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE `%s` LIKE `%s`.`%s`", table, tpl.name, table)); err != nil {
			t.Fatalf("testenv: copy table %s of template %s: %v", table, tpl.name, err)
		}
	}
	for _, table := range tpl.filled {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO `%s` SELECT * FROM `%s`.`%s`", table, tpl.name, table)); err != nil {
			t.Fatalf("testenv: copy the rows of %s of template %s: %v", table, tpl.name, err)
		}
	}
	return dsn
}

// mysqlTemplate is a template database: its name, its tables and those
// of them that hold rows.
type mysqlTemplate struct {
	name           string
	tables, filled []string
}

var mysqlTemplates = struct {
	mu    sync.Mutex
	byKey map[string]*lazy[mysqlTemplate]
}{byKey: map[string]*lazy[mysqlTemplate]{}}

func mysqlTemplateFor(t testing.TB, key string, fill func(dsn string) error) (mysqlTemplate, error) {
	t.Helper()
	s := mysqlServerFor(t, "testenv.MySQLFromTemplate")
	mysqlTemplates.mu.Lock()
	l := mysqlTemplates.byKey[key]
	if l == nil {
		l = new(lazy[mysqlTemplate])
		mysqlTemplates.byKey[key] = l
	}
	mysqlTemplates.mu.Unlock()
	return l.get(func() (mysqlTemplate, error) { return buildTemplate(t, s, key, fill) })
}

// buildTemplate creates the template database of key, fills it and lists
// its tables; Main drops it (after the tests, before the server's pool is
// closed: teardown hooks run newest first).
func buildTemplate(t testing.TB, s *mysqlServer, key string, fill func(dsn string) error) (mysqlTemplate, error) {
	name, err := randomName("sjt_"+packageName()+"_tpl_", 4)
	if err != nil {
		return mysqlTemplate{}, err
	}
	tpl := mysqlTemplate{name: name}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		return tpl, fmt.Errorf("testenv: create template database %s on %s: %w", name, s.source, err)
	}
	onTeardown(func() error {
		if keep() {
			return nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`")
		return err
	})
	cfg := s.cfg.Clone()
	cfg.DBName = name
	start := time.Now()
	if err := fill(formatDSN(cfg)); err != nil {
		return tpl, fmt.Errorf("testenv: fill template %q (%s): %w", key, name, err)
	}
	rows, err := s.admin.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name", name)
	if err != nil {
		return tpl, fmt.Errorf("testenv: tables of template %s: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			return tpl, err
		}
		tpl.tables = append(tpl.tables, table)
	}
	if err := rows.Err(); err != nil {
		return tpl, err
	}
	for _, table := range tpl.tables {
		var one int
		err := s.admin.QueryRowContext(ctx, fmt.Sprintf("SELECT 1 FROM `%s`.`%s` LIMIT 1", name, table)).Scan(&one)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return tpl, fmt.Errorf("testenv: rows of %s.%s: %w", name, table, err)
		default:
			tpl.filled = append(tpl.filled, table)
		}
	}
	t.Logf("testenv: template %q is database %s (%d tables, built in %s): tests copy it", key, name, len(tpl.tables), time.Since(start).Round(time.Millisecond))
	return tpl, nil
}

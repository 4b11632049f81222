package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitMigrationReadsBothSections(t *testing.T) {
	t.Parallel()
	up, down, err := splitMigration("-- why this step\n\n-- migrate up\nCREATE TABLE t (a INT);\n-- a comment\nCREATE INDEX i ON t (a);\n\n-- migrate down\nDROP TABLE t;\n")
	require.NoError(t, err)
	require.Equal(t, []string{"CREATE TABLE t (a INT)", "CREATE INDEX i ON t (a)"}, splitStatements(up))
	require.Equal(t, []string{"DROP TABLE t"}, splitStatements(down))

	up, down, err = splitMigration("-- migrate up\nALTER TABLE t ADD b INT;\n")
	require.NoError(t, err)
	require.Equal(t, []string{"ALTER TABLE t ADD b INT"}, splitStatements(up))
	require.Empty(t, down)
}

func TestSplitMigrationRefusesMisshapenFiles(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ text, says string }{
		"no marker":     {"CREATE TABLE t (a INT);\n", `SQL before "-- migrate up"`},
		"only comments": {"-- nothing\n", `no "-- migrate up" line`},
		"down first":    {"-- migrate down\nDROP TABLE t;\n-- migrate up\nCREATE TABLE t (a INT);\n", "line 1: \"-- migrate down\" before"},
		"two ups":       {"-- migrate up\nCREATE TABLE t (a INT);\n-- migrate up\nCREATE TABLE u (a INT);\n", "line 3: a second \"-- migrate up\""},
		"two downs":     {"-- migrate up\nCREATE TABLE t (a INT);\n-- migrate down\nDROP TABLE t;\n-- migrate down\n", "line 5: a second \"-- migrate down\""},
		"empty up":      {"-- migrate up\n-- later\n-- migrate down\nDROP TABLE t;\n", "holds no statement"},
		"sql above up":  {"-- header\nDROP TABLE t;\n-- migrate up\nCREATE TABLE t (a INT);\n", "line 2: SQL before"},
	} {
		_, _, err := splitMigration(c.text)
		require.ErrorContains(t, err, c.says, name)
	}
}

// Package fielderr holds the one text form of field errors — a map from a
// field path (name, nodes[3].key) to what is wrong with it — shared by the
// validators of jobs (admin/jobdef) and workflows (admin/workflow), so
// that every API answer and CLI message lists them the same way.
package fielderr

import (
	"sort"
	"strings"
)

// Format returns "<what>: f1: msg1; f2: msg2", the fields sorted, so that
// the same errors always read the same.
func Format(what string, fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+": "+fields[k])
	}
	return what + ": " + strings.Join(parts, "; ")
}

package jobdef

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/executor/builtin"
)

// TestBuiltinParamsAreCodes: a built-in handler's refusal of its params is
// a message code of the catalog (ParamsField or ParamsDoc around a
// "builtin.<code>" problem, nested problems too) whose English is exactly
// the text the API answered before codes existed
// (testdata/builtin_params_en.json, written by the code before this
// change). The catalog's builtin.* templates are executor/builtin's
// Problems, and the cases meet every one the admin can see.
func TestBuiltinParamsAreCodes(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/builtin_params_en.json")
	require.NoError(t, err)
	var golden map[string]string
	require.NoError(t, json.Unmarshal(b, &golden))
	cases := builtinParamsCases()
	require.Len(t, golden, len(cases), "a golden text for every case")

	seen := map[msg.Code]bool{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range cases {
		want, ok := golden[c.name]
		require.True(t, ok, "%s: no golden text", c.name)
		spec := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: c.handler, Params: c.params, Cron: "0 3 * * *"}}
		_, err := Validate(spec, now)
		var fe FieldErrors
		require.ErrorAs(t, err, &fe, c.name)
		require.Equal(t, map[string]string{"params": want}, map[string]string(fe), "%s: the English of the API is unchanged", c.name)
		var fm FieldMsgs
		require.ErrorAs(t, err, &fm, c.name)
		m := fm["params"]
		require.Contains(t, []msg.Code{msg.ParamsField, msg.ParamsDoc}, m.Code, c.name)
		walkCodes(t, c.name, m, seen)
		require.Equal(t, want, m.String(), "%s: the code renders the English the API answers", c.name)

		// stored and read back (as the console gets it: JSON), it renders the same
		var back msg.Msg
		require.NoError(t, back.Scan(m.Stored()), c.name)
		require.Equal(t, want, back.String(), "%s: read back from JSON", c.name)
	}

	for code, tmpl := range builtin.Problems {
		require.Equal(t, tmpl, msg.Catalog[msg.Code("builtin."+code)], "the catalog's builtin.%s is executor/builtin's", code)
	}
	var unmet []string
	for code := range builtin.Problems {
		switch code {
		case "error": // a refusal that is no problem of Problems: none is, so no case can meet it
		case "params.timeout_executor", "sql.sqlite_semicolons", "sql.sqlite_one_statement", "http.host_ipv6":
			// the executor's checks when it runs the job (its own maximum
			// timeout, SQLite's tokenizer) and a host url.Parse refuses
			// first: executor/builtin's TestProblemsOnlyTheExecutorMeets
		default:
			if !seen[msg.Code("builtin."+code)] {
				unmet = append(unmet, code)
			}
		}
	}
	require.Empty(t, unmet, "problems no case meets")
	n := 0
	for code := range msg.Catalog {
		if strings.HasPrefix(string(code), "builtin.") {
			n++
		}
	}
	require.Equal(t, len(builtin.Problems), n, "no builtin.* code in the catalog that executor/builtin does not have")
}

package jobdef

import (
	"github.com/shardjob/shardjob/admin/apitypes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFindCycle(t *testing.T) {
	t.Parallel()
	graph := map[int64][]int64{1: {2}, 2: {3}, 4: {1}}
	require.Nil(t, FindCycle(graph, 3, []int64{5}), "3 → 5: no cycle")
	require.Equal(t, []int64{3, 4, 1, 2, 3}, FindCycle(graph, 3, []int64{4}), "3 → 4 → 1 → 2 → 3")
	require.Equal(t, []int64{7, 7}, FindCycle(graph, 7, []int64{7}), "self")
	require.Nil(t, FindCycle(graph, 1, []int64{2, 3}), "diamond-free DAG")
	require.Nil(t, FindCycle(map[int64][]int64{1: {2, 3}, 2: {4}, 3: {4}}, 5, []int64{1}), "diamond is not a cycle")
}

func TestValidateFields(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 3 * * *", TimeZone: "Europe/Berlin"}, ChildJobIDs: []int64{4, 5}}
	v, err := Validate(ok, now)
	require.NoError(t, err)
	require.Equal(t, "4,5", v.Job.ChildJobIDs)
	require.Equal(t, 1, v.Job.SlotCount, "default one slot")
	require.Equal(t, time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC).UnixMilli(), v.Job.NextFireAt.Int64, "03:00 Berlin = 02:00 UTC")

	bad := ok
	bad.ChildJobIDs = []int64{4, 4}
	_, err = Validate(bad, now)
	require.ErrorContains(t, err, "child_job_ids")
	var fe FieldErrors
	bad = apitypes.JobSpec{}
	_, err = Validate(bad, now)
	require.ErrorAs(t, err, &fe)
	for _, f := range []string{"app", "name", "handler", "cron"} {
		require.NotEmpty(t, fe[f], f)
	}
	disabled := ok
	off := false
	disabled.Enabled = &off
	v, err = Validate(disabled, now)
	require.NoError(t, err)
	require.False(t, v.Job.NextFireAt.Valid, "a disabled job has no next firing")
}

func TestValidateBuiltinHandlerParams(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "http", Cron: "0 3 * * *", Params: `{"url": "ftp://example.com/"}`}}
	_, err := Validate(s, now)
	var fe FieldErrors
	require.ErrorAs(t, err, &fe)
	require.Contains(t, fe["params"], "http handler params: url:")
	s.Params = `{"url": "https://example.com/hook?slot={slot}"}`
	_, err = Validate(s, now)
	require.NoError(t, err)
	s.Handler, s.Params = "my.handler", "not json"
	_, err = Validate(s, now)
	require.NoError(t, err, "the params of other handlers are theirs to read")
}

// TestValidateMessagesSayWhatIsWrong (issue 30): a name given but not
// valid is not called "required" and the message says which characters
// are allowed; a bad zone does not hide a bad cron of the same request;
// the time_zone message does not repeat "time zone".
func TestValidateMessagesSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "billing", Name: "我的 job", Handler: "h", Cron: "0 25 * * *", TimeZone: "Mars/Olympus"}}
	_, err := Validate(spec, now)
	var fe FieldErrors
	require.ErrorAs(t, err, &fe)
	require.Equal(t, `"我的 job" is not a valid name: use 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit (no spaces)`, fe["name"])
	require.Contains(t, fe["cron"], "hour", "the cron's mistake is reported with the zone's")
	require.True(t, strings.HasPrefix(fe["time_zone"], `"Mars/Olympus": `), fe["time_zone"])
	require.NotContains(t, fe["time_zone"], "time zone:")

	spec.Name = ""
	_, err = Validate(spec, now)
	require.ErrorAs(t, err, &fe)
	require.True(t, strings.HasPrefix(fe["name"], "required; 1-64 ASCII letters"), fe["name"])

	spec.Name, spec.Cron = "n", "0 3 * * *"
	_, err = Validate(spec, now)
	require.ErrorAs(t, err, &fe)
	require.NotContains(t, fe, "cron", "a good cron with a bad zone: only the zone")
	require.Contains(t, fe, "time_zone")
}

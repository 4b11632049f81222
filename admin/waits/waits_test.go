package waits

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
)

func TestDecideStartsKeepsAndTimesOut(t *testing.T) {
	t.Parallel()
	w := Waits{For: []Ref{{Job: &NameRef{Name: "load"}}, {Workflow: &NameRef{App: "mkt", Name: "close"}}}, Timeout: "2h"}
	since := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	deadline := since.Add(2 * time.Hour)

	d := Decide(w, "billing", []bool{true, false}, since, deadline.Add(-time.Millisecond))
	require.Equal(t, Keep, d.Action)
	require.Equal(t, "workflow mkt/close", d.Reason())
	require.Equal(t, deadline, d.Deadline)
	require.Equal(t, Fail, d.OnTimeout, "omitted on_timeout is fail")

	d = Decide(w, "billing", []bool{false, false}, since, deadline)
	require.Equal(t, TimedOut, d.Action, "times out at the deadline")
	require.Equal(t, "billing/load, workflow mkt/close", d.Reason())

	d = Decide(w, "billing", []bool{true, true}, since, deadline.Add(time.Hour))
	require.Equal(t, Start, d.Action, "met after the deadline but seen first: starts")
	require.Empty(t, d.Missing)

	require.Equal(t, 24*time.Hour, Waits{}.TimeoutDuration(), "the default")
	require.Zero(t, Waits{Timeout: "soon"}.TimeoutDuration())
}

func TestCheckNamesRelativeFields(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	bad := func(f string, m msg.Msg) { got[f] = m.String() }
	never := func(string, string, bool) (msg.Msg, bool) { return msg.Msg{}, false }
	Check(Waits{For: []Ref{{Job: &NameRef{Name: "a"}}, {Job: &NameRef{App: "x", Name: "a"}}, {Job: &NameRef{App: "x", Name: "a"}}},
		Timeout: "0s", OnTimeout: "later"}, "x", never, bad)
	require.Equal(t, map[string]string{
		"wait_for[1]":  "x/a is wait_for[0] already", // the app defaults to the owner's
		"wait_for[2]":  "x/a is wait_for[1] already",
		"wait_timeout": "0s is outside 1ms-168h0m0s",
		"on_timeout":   `"later" is not a timeout setting: fail (default) or skip`,
	}, got)
}

func TestStoredAndWireFormsRoundTrip(t *testing.T) {
	t.Parallel()
	refs := []Ref{{Job: &NameRef{Name: "load"}}, {Workflow: &NameRef{App: "mkt", Name: "close"}}}
	s := Format(refs)
	require.JSONEq(t, `[{"job":{"name":"load"}},{"workflow":{"app":"mkt","name":"close"}}]`, s)
	back, err := Parse(s)
	require.NoError(t, err)
	require.Equal(t, refs, back)
	require.Equal(t, refs, FromWire(ToWire(refs)))
	require.Equal(t, "", Format(nil))
	none, err := Parse("")
	require.NoError(t, err)
	require.Nil(t, none)
	_, err = Parse("{")
	require.Error(t, err)
	require.Nil(t, ToWire(nil))
	require.Nil(t, FromWire([]apitypes.WorkflowWait{}))
}

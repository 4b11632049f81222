package protocol

import (
	"encoding/json"
	"testing"
)

// A slot result carries its handler's JSON result through a round trip
// unchanged, and a result from an executor older than results (no field)
// decodes with none.
func TestSlotResultRoundTrip(t *testing.T) {
	in := ResultsRequest{InstanceID: "x", Results: []SlotResult{
		{Token: 7, Status: SlotSucceeded, Result: json.RawMessage(`{"rows":42,"files":["a","b"]}`)},
		{Token: 8, Status: SlotSucceeded},
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out ResultsRequest
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if got := string(out.Results[0].Result); got != `{"rows":42,"files":["a","b"]}` {
		t.Errorf("result = %s", got)
	}
	if out.Results[1].Result != nil {
		t.Errorf("no result sent, got %s", out.Results[1].Result)
	}
	var old SlotResult
	if err := json.Unmarshal([]byte(`{"token":9,"status":"succeeded","started_at_ms":1,"finished_at_ms":2}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Result != nil || old.Token != 9 {
		t.Errorf("old executor's result = %+v", old)
	}
}

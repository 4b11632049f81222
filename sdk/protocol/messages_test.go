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

// The error class and the retry delay travel with a failed result; a
// result from an executor older than error classes has neither (the admin
// takes it as retryable), and a result without them sends no keys.
func TestSlotResultErrorClass(t *testing.T) {
	b, err := json.Marshal(SlotResult{Token: 7, Status: SlotFailed, ErrorClass: ClassRetryable, RetryAfterMS: 30000})
	if err != nil {
		t.Fatal(err)
	}
	var out SlotResult
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.ErrorClass != ClassRetryable || out.RetryAfterMS != 30000 {
		t.Errorf("round trip = %+v", out)
	}
	b, err = json.Marshal(SlotResult{Token: 8, Status: SlotSucceeded})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"token":8,"status":"succeeded","started_at_ms":0,"finished_at_ms":0}` {
		t.Errorf("succeeded result = %s", got)
	}
	var old SlotResult
	if err := json.Unmarshal([]byte(`{"token":9,"status":"failed","error":"x","started_at_ms":1,"finished_at_ms":2}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.ErrorClass != "" || old.RetryAfterMS != 0 {
		t.Errorf("old executor's result = %+v", old)
	}
}

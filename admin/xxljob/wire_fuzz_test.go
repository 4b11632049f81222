package xxljob

import (
	"encoding/json"
	"testing"
)

// FuzzParseAnswer: an executor's answer is read, or refused as unreadable,
// never a panic; a readable refusal always has a code.
func FuzzParseAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"code":200,"msg":null}`, `{"code":200,"msg":null,"data":{"logContent":"x"}}`,
		`{"code":500,"msg":"job handler [x] not found."}`, `[{"logId":3,"handleCode":500,"handleMsg":"There are tasks running"}]`,
		`[{"logId":3,"handleCode":0}]`, `[]`, `null`, `<html>`, ` [ `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rt, err := parseAnswer(data)
		if err != nil {
			return
		}
		if p := rt.payload(); len(p) > 0 && !json.Valid(p) {
			t.Fatalf("payload %q of %q is not JSON", p, data)
		}
		if len(data) > 0 && data[0] == '[' && rt.Code == 0 {
			t.Fatalf("a refusal array %q read without a code", data)
		}
	})
}

// FuzzParseCallbacks: a callback body is read (a bare array or
// {"callbackList": […]}) or refused with a message, never a panic.
func FuzzParseCallbacks(f *testing.F) {
	for _, seed := range []string{
		`[{"logId":1,"logDateTim":2,"handleCode":200,"handleMsg":"ok"}]`,
		`{"callbackList":[{"logId":1,"logDateTime":2,"handleCode":500,"handleMsg":"boom"}]}`,
		`{"callbackList":null}`, `{}`, `[]`, `null`, `{"callbackList":[{"logId":"x"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := parseCallbacks(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("a refusal without a message")
			}
			return
		}
		if _, err := json.Marshal(items); err != nil {
			t.Fatal(err)
		}
	})
}

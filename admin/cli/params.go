package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MergeParams applies --param key=value overrides to a job's params, in the
// job's own format: when the params are a JSON object, each key is set (the
// value as JSON when it parses as JSON, else as a string); otherwise the
// params are taken as "key=value;key=value" (the demo handlers' format) and
// each key is replaced in place or appended.
func MergeParams(base string, kvs []string) (string, error) {
	if len(kvs) == 0 {
		return base, nil
	}
	pairs := make([][2]string, 0, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return "", fmt.Errorf("--param %q: write key=value", kv)
		}
		pairs = append(pairs, [2]string{k, v})
	}
	trimmed := strings.TrimSpace(base)
	if strings.HasPrefix(trimmed, "{") {
		return mergeJSON(trimmed, pairs)
	}
	return mergeKV(trimmed, pairs)
}

func mergeJSON(base string, pairs [][2]string) (string, error) {
	obj := map[string]json.RawMessage{}
	dec := json.NewDecoder(strings.NewReader(base))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return "", fmt.Errorf("the job's params look like JSON but do not parse (%w); pass the whole params with --params instead", err)
	}
	for _, p := range pairs {
		v := []byte(p[1])
		if !json.Valid(v) {
			v, _ = json.Marshal(p[1])
		}
		obj[p[0]] = json.RawMessage(v)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil { // keys sorted: a stable result
		return "", err
	}
	return strings.TrimSpace(b.String()), nil
}

func mergeKV(base string, pairs [][2]string) (string, error) {
	var parts []string
	if base != "" {
		parts = strings.Split(base, ";")
	}
	for _, p := range pairs {
		if strings.ContainsAny(p[0]+p[1], ";") {
			return "", fmt.Errorf("--param %s=%s: ';' separates params; it cannot be inside a key or value", p[0], p[1])
		}
		done := false
		for i, part := range parts {
			if k, _, _ := strings.Cut(part, "="); strings.TrimSpace(k) == p[0] {
				parts[i] = p[0] + "=" + p[1]
				done = true
			}
		}
		if !done {
			parts = append(parts, p[0]+"="+p[1])
		}
	}
	return strings.Join(parts, ";"), nil
}

package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMergeParams(t *testing.T) {
	cases := []struct {
		base string
		kvs  []string
		want string
	}{
		{"records=10", nil, "records=10"},
		{"records=10;ms_per_record=5", []string{"records=3"}, "records=3;ms_per_record=5"},
		{"records=10", []string{"batch=7"}, "records=10;batch=7"},
		{"", []string{"records=1", "scope=job"}, "records=1;scope=job"},
		{"", []string{"empty="}, "empty="},
		{`{"url":"http://x","retries":2}`, []string{"retries=5", "method=POST"}, `{"method":"POST","retries":5,"url":"http://x"}`},
		{`{"a":1}`, []string{"b=true", "c=[1,2]", "d=not json"}, `{"a":1,"b":true,"c":[1,2],"d":"not json"}`},
	}
	for _, tc := range cases {
		got, err := MergeParams(tc.base, tc.kvs)
		require.NoError(t, err, "%q %v", tc.base, tc.kvs)
		require.Equal(t, tc.want, got)
	}
	for _, bad := range []struct {
		base string
		kv   string
	}{{"", "novalue"}, {"", "=v"}, {"a=1", "b=x;y"}, {"{broken", "a=1"}} {
		_, err := MergeParams(bad.base, []string{bad.kv})
		require.Error(t, err, "%q %q", bad.base, bad.kv)
	}
}

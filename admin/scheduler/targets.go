package scheduler

import (
	"strings"

	"github.com/shardjob/shardjob/admin/placement"
	"github.com/shardjob/shardjob/admin/store"
)

// targetsFor returns the executors that can run handler.
func targetsFor(execs []store.Executor, handler string) []placement.Executor {
	out := make([]placement.Executor, 0, len(execs))
	for _, e := range execs {
		if hasHandler(e.Handlers, handler) {
			out = append(out, placement.Executor{ID: e.ID, Capacity: e.Capacity})
		}
	}
	return out
}

func hasHandler(list, h string) bool {
	if list == "" {
		return true // executor did not say: let it refuse unknown handlers
	}
	for _, x := range strings.Split(list, ",") {
		if x == h {
			return true
		}
	}
	return false
}

// addTarget records that executor id of app got new attempts to push.
func addTarget(m map[string]map[int64]bool, app string, id int64) {
	if m[app] == nil {
		m[app] = map[int64]bool{}
	}
	m[app][id] = true
}

func keys(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

package retention

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
)

// ArchiveJobName is the name of the dedup archive job created per app by
// EnsureArchiveJobs.
const ArchiveJobName = "dedup-archive"

// ParseArchiveJobs parses the --dedup-archive setting: app=datasource pairs,
// comma separated (e.g. "billing=billing-db,search=search-db"). The data
// source is the --sql-datasource name, on the app's executors, of the
// business database holding that app's dedup_record table.
func ParseArchiveJobs(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		app, ds, ok := strings.Cut(part, "=")
		app, ds = strings.TrimSpace(app), strings.TrimSpace(ds)
		if !ok || app == "" || ds == "" {
			return nil, fmt.Errorf("%q: want app=datasource (the --sql-datasource name on the app's executors)", part)
		}
		if _, dup := out[app]; dup {
			return nil, fmt.Errorf("app %s named twice", app)
		}
		out[app] = ds
	}
	return out, nil
}

// EnsureArchiveJobs creates, for each app of apps (app → data source), the
// job app/dedup-archive that archives the app's done dedup rows older than
// 30 days, daily at a quiet hour, in 4 slots — unless a job of that name
// exists: then it is left as it is (operators edit it like any job). It
// returns the apps whose job it created.
func EnsureArchiveJobs(ctx context.Context, st *store.Store, apps map[string]string) ([]string, error) {
	names := make([]string, 0, len(apps))
	for app := range apps {
		names = append(names, app)
	}
	sort.Strings(names)
	now, err := st.Now(ctx)
	if err != nil {
		return nil, err
	}
	var created []string
	for _, app := range names {
		params, _ := json.Marshal(map[string]any{"datasource": apps[app], "mode": "archive", "horizon": "720h"})
		v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{
			App: app, Name: ArchiveJobName, Handler: "dedup-archive",
			Description: "Archives done dedup records older than the horizon (created by --dedup-archive; edit freely)",
			Cron:        "H H(1-5) * * *", SlotCount: 4, OverlapPolicy: "skip", Params: string(params),
		}}, now)
		if err != nil {
			return created, fmt.Errorf("dedup archive job of app %s: %w", app, err)
		}
		_, err = st.CreateJob(ctx, v.Job)
		if errors.Is(err, store.ErrConflict) {
			continue // exists: the operator's version stands
		}
		if err != nil {
			return created, fmt.Errorf("dedup archive job of app %s: %w", app, err)
		}
		created = append(created, app)
	}
	return created, nil
}

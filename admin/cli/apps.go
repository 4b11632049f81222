package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// AppDef is an app in a jobs file (kind: app): its name, and what its team
// says of it. A field left out keeps the server's value.
type AppDef struct {
	Name        string    `json:"name"`
	Description *string   `json:"description,omitempty"`
	Owners      *[]string `json:"owners,omitempty"`
	// Quotas (admins only; 0: no limit).
	MaxJobs             *int64 `json:"max_jobs,omitempty"`
	MaxSlotsPerRun      *int64 `json:"max_slots_per_run,omitempty"`
	MaxBackfillParallel *int64 `json:"max_backfill_parallel,omitempty"`
	// MaxRunningSlots caps the app's slots placed at once (admins only; 0:
	// no cap).
	MaxRunningSlots *int64 `json:"max_running_slots,omitempty"`
	// MaxStartsPerSecond limits the app's run starts a second (admins
	// only; 0: no limit).
	MaxStartsPerSecond *int64 `json:"max_starts_per_second,omitempty"`
	// Weight is the app's share of the platform's capacity (admins only).
	Weight *int64 `json:"weight,omitempty"`
	// MaxLogBytesPerDay is a quota on the run-log bytes the app stores a
	// day (admins only; 0: none).
	MaxLogBytesPerDay *int64 `json:"max_log_bytes_per_day,omitempty"`
}

// FileApp is an app of a jobs file, with the line it starts on.
type FileApp struct {
	AppDef
	line int
}

// Key is the app's name.
func (d FileApp) Key() string { return d.Name }

// Line is where the app starts in its file.
func (d FileApp) Line() int { return d.line }

// AppChange is what apply does to one app of a file.
type AppChange struct {
	Action  Action
	Want    FileApp
	Current *apitypes.AppView // nil for a create
	Fields  []FieldChange
}

// planApps compares the apps of a file with the server's (those the user
// may see; an app the user may not see is planned as a create, which the
// admin refuses).
func planApps(ctx context.Context, cl *Client, want []FileApp) ([]AppChange, error) {
	if len(want) == 0 {
		return nil, nil
	}
	var have struct {
		Apps []apitypes.AppView `json:"apps"`
	}
	if err := cl.Do(ctx, http.MethodGet, "/api/v1/apps", nil, &have); err != nil {
		return nil, err
	}
	plan := make([]AppChange, 0, len(want))
	for _, w := range want {
		ch := AppChange{Action: Create, Want: w}
		i := slices.IndexFunc(have.Apps, func(a apitypes.AppView) bool { return a.Name == w.Name })
		if i >= 0 {
			cur := have.Apps[i]
			ch.Current = &cur
			ch.Action = Unchanged
			if w.Description != nil && strings.TrimSpace(*w.Description) != cur.Description {
				ch.Fields = append(ch.Fields, FieldChange{Field: "description", Old: strconv.Quote(cur.Description), New: strconv.Quote(strings.TrimSpace(*w.Description))})
			}
			if w.Owners != nil && !slices.Equal(*w.Owners, cur.Owners) {
				ch.Fields = append(ch.Fields, FieldChange{Field: "owners", Old: "[" + strings.Join(cur.Owners, ", ") + "]", New: "[" + strings.Join(*w.Owners, ", ") + "]"})
			}
			for _, q := range []struct {
				field     string
				want, cur *int64
			}{{"max_jobs", w.MaxJobs, cur.MaxJobs}, {"max_slots_per_run", w.MaxSlotsPerRun, cur.MaxSlotsPerRun}, {"max_backfill_parallel", w.MaxBackfillParallel, cur.MaxBackfillParallel}, {"max_running_slots", w.MaxRunningSlots, cur.MaxRunningSlots}, {"max_starts_per_second", w.MaxStartsPerSecond, cur.MaxStartsPerSecond}, {"max_log_bytes_per_day", w.MaxLogBytesPerDay, cur.MaxLogBytesPerDay}} {
				if q.want != nil && *q.want != quota(q.cur) {
					ch.Fields = append(ch.Fields, FieldChange{Field: q.field, Old: quotaText(quota(q.cur)), New: quotaText(*q.want)})
				}
			}
			if w.Weight != nil && *w.Weight != cur.Weight {
				ch.Fields = append(ch.Fields, FieldChange{Field: "weight", Old: strconv.FormatInt(cur.Weight, 10), New: strconv.FormatInt(*w.Weight, 10)})
			}
			if len(ch.Fields) > 0 {
				ch.Action = Update
			}
		}
		plan = append(plan, ch)
	}
	return plan, nil
}

func printAppPlan(w io.Writer, plan []AppChange) {
	for _, c := range plan {
		switch c.Action {
		case Create:
			fmt.Fprintf(w, "+ create app %s\n", c.Want.Name)
		case Update:
			fmt.Fprintf(w, "~ update app %s\n", c.Want.Name)
			for _, f := range c.Fields {
				fmt.Fprintf(w, "    %s: %s -> %s\n", f.Field, f.Old, f.New)
			}
		default:
			fmt.Fprintf(w, "= unchanged app %s\n", c.Want.Name)
		}
	}
}

// applyApp carries out one change; it returns the app saved (nil when
// unchanged).
func applyApp(ctx context.Context, cl *Client, c AppChange) (*apitypes.AppView, error) {
	spec := apitypes.AppSpec{Name: c.Want.Name, Description: c.Want.Description, Owners: c.Want.Owners,
		MaxJobs: c.Want.MaxJobs, MaxSlotsPerRun: c.Want.MaxSlotsPerRun, MaxBackfillParallel: c.Want.MaxBackfillParallel, MaxRunningSlots: c.Want.MaxRunningSlots, MaxStartsPerSecond: c.Want.MaxStartsPerSecond, Weight: c.Want.Weight, MaxLogBytesPerDay: c.Want.MaxLogBytesPerDay}
	var got apitypes.AppView
	switch c.Action {
	case Create:
		if err := cl.Do(ctx, http.MethodPost, "/api/v1/apps", spec, &got); err != nil {
			return nil, err
		}
	case Update:
		spec.Version = c.Current.Version
		err := cl.Do(ctx, http.MethodPatch, "/api/v1/apps/"+url.PathEscape(c.Want.Name), spec, &got)
		var ae *APIError
		if errors.As(err, &ae) && ae.Status == http.StatusConflict {
			return nil, fmt.Errorf("the app changed on the server after it was read (version %d); run apply again to see the new difference: %w", c.Current.Version, err)
		}
		if err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	return &got, nil
}

// quota is a quota as a number, 0 for none.
func quota(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

func quotaText(v int64) string {
	if v == 0 {
		return "none"
	}
	return strconv.FormatInt(v, 10)
}

package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/auth"
)

// TestJobListSearchFiltersAndPages: GET /jobs searches, filters, sorts and
// pages on the server with an opaque cursor and says how many match; a
// substring search says how far it got; every bad parameter is a 400 that
// names it and says what to do.
func TestJobListSearchFiltersAndPages(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		tok := e.token("ops")
		for i := range 12 {
			spec := withAll(map[string]any{"app": []string{"billing", "shop"}[i%2], "name": fmt.Sprintf("job-%02d", i)})
			if i%4 == 0 {
				spec["cron"] = "@every 1h"
			}
			var j struct{ ID int64 }
			require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", tok, spec, &j))
			if i == 3 {
				require.Equal(t, http.StatusOK, e.call("POST", fmt.Sprintf("/api/v1/jobs/%d/disable", j.ID), tok, nil, nil))
			}
		}
		type list struct {
			Jobs []struct {
				ID   int64  `json:"id"`
				Name string `json:"name"`
			} `json:"jobs"`
			NextCursor string `json:"next_cursor"`
			Count      *int64 `json:"count"`
			CountExact bool   `json:"count_exact"`
			Partial    bool   `json:"partial"`
			Scanned    int    `json:"scanned"`
		}
		get := func(q url.Values) list {
			var l list
			require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs?"+q.Encode(), tok, nil, &l))
			return l
		}
		// Every job by name, 5 a page, through the cursor.
		var names []string
		q := url.Values{"limit": {"5"}}
		for pages := 0; ; pages++ {
			l := get(q)
			if pages == 0 {
				require.NotNil(t, l.Count)
				require.EqualValues(t, 12, *l.Count)
				require.True(t, l.CountExact)
			} else {
				require.Nil(t, l.Count, "counted on the first page only")
			}
			for _, j := range l.Jobs {
				names = append(names, j.Name)
			}
			if l.NextCursor == "" {
				break
			}
			q.Set("cursor", l.NextCursor)
		}
		require.Len(t, names, 12)
		require.Equal(t, "job-00", names[0])
		require.Equal(t, "job-11", names[11])

		l := get(url.Values{"app": {"shop"}, "q": {"job-1"}})
		require.Len(t, l.Jobs, 1) // job-11 (job-10 is billing's)
		require.EqualValues(t, 1, *l.Count)
		l = get(url.Values{"state": {"disabled"}})
		require.Len(t, l.Jobs, 1)
		require.Equal(t, "job-03", l.Jobs[0].Name)
		l = get(url.Values{"schedule": {"every"}})
		require.Len(t, l.Jobs, 3)
		require.Nil(t, l.Count, "a schedule kind is searched, not counted")
		l = get(url.Values{"q": {"-1"}, "match": {"contains"}})
		require.Len(t, l.Jobs, 2)
		require.False(t, l.Partial)
		require.Equal(t, 12, l.Scanned)
		l = get(url.Values{"sort": {"next_fire"}, "limit": {"20"}})
		require.Len(t, l.Jobs, 12)
		require.Equal(t, "job-03", l.Jobs[11].Name, "the disabled job has no next firing: last")
		// The first API's paging by id still works.
		l = get(url.Values{"after": {"0"}, "limit": {"500"}})
		require.Len(t, l.Jobs, 12)
		l = get(url.Values{"after": {fmt.Sprint(l.Jobs[5].ID)}})
		require.Len(t, l.Jobs, 6)

		first := get(url.Values{"limit": {"5"}})
		for _, c := range []struct{ query, param, says string }{
			{"limit=0", "limit", "the page size must be an integer from 1 to 500"},
			{"limit=10000", "limit", "the page size must be an integer from 1 to 500"},
			{"state=sleeping", "state", "must be one of scheduled, paused, disabled, completed"},
			{"schedule=weekly", "schedule", "must be one of cron, every, at"},
			{"sort=size", "sort", "must be one of name, id, next_fire"},
			{"match=fuzzy", "match", "must be one of prefix, contains"},
			{"cursor=nonsense", "cursor", "pass next_cursor of the previous page unchanged"},
			{"sort=id&cursor=" + url.QueryEscape(first.NextCursor), "cursor", "with the same sort"},
			{"after=-3", "after", "must be a positive integer"},
		} {
			var bad struct {
				Error  string            `json:"error"`
				Fields map[string]string `json:"fields"`
			}
			require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/jobs?"+c.query, tok, nil, &bad), c.query)
			require.True(t, strings.HasPrefix(bad.Error, c.param+": "), "%s: %s", c.query, bad.Error)
			require.Contains(t, bad.Error, c.says, c.query)
			require.Contains(t, bad.Fields, c.param, c.query)
		}
		for _, query := range []string{"limit=0", "limit=5000", "status=done", "trigger=timer", "cursor=j1.abc", "job_id=x"} {
			require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/runs?"+query, tok, nil, nil), query)
		}
		var runs struct {
			Count      *int64 `json:"count"`
			CountExact bool   `json:"count_exact"`
		}
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs?app=shop&trigger=manual", tok, nil, &runs))
		require.NotNil(t, runs.Count)
		require.True(t, runs.CountExact)
	})
}

package ops

import (
	"context"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/store"
)

// Jobs returns a page of the jobs q selects among those the actor may see
// (q.Apps is theirs), and the key of the next page (nil on the last);
// admin/api writes it as the opaque cursor. With count (a first page) the
// answer says how many jobs match, when counting them is cheap enough
// (store.DefaultListCountCap).
func (s *Service) Jobs(ctx context.Context, a Actor, q store.JobQuery, count bool) (apitypes.JobList, *store.JobCursor, error) {
	q.Apps = a.User.AppList()
	page, err := s.st.JobPage(ctx, q)
	if err != nil {
		return apitypes.JobList{}, nil, err
	}
	out := apitypes.JobList{Jobs: make([]apitypes.Job, 0, len(page.Jobs)), Partial: page.Partial, Scanned: page.Scanned}
	var withBreaker []int64
	for _, j := range page.Jobs {
		if j.BreakerThreshold > 0 {
			withBreaker = append(withBreaker, j.ID)
		}
	}
	breakers, err := s.st.BreakersOfJobs(ctx, withBreaker)
	if err != nil {
		return apitypes.JobList{}, nil, err
	}
	for _, j := range page.Jobs {
		v := jobdef.View(j)
		if b, ok := breakers[j.ID]; ok {
			v.Breaker = jobdef.BreakerView(b)
		}
		out.Jobs = append(out.Jobs, v)
	}
	if count {
		n, exact, counted, err := s.st.CountJobs(ctx, q, store.DefaultListCountCap)
		if err != nil {
			return apitypes.JobList{}, nil, err
		}
		if counted {
			out.Count, out.CountExact = &n, exact
		}
	}
	return out, page.Next, nil
}

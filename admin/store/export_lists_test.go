package store

// JobPageSQL is the query JobPage runs for q (for the SQLite plan check of
// the list queries): the part with a next firing, or without (noNext).
func (s *Store) JobPageSQL(q JobQuery, noNext bool) (string, []any) { return s.jobPageQuery(q, noNext) }

// CountJobsSQL is the capped count CountJobs runs for q.
func (s *Store) CountJobsSQL(q JobQuery, limit int) (string, []any) {
	w := s.jobFilters(q)
	return w.query(s.q.get(qJobCountCapped), limit+1)
}

// RunListSQL is the query Runs runs for f with a cursor given as
// f.BeforeAt and f.BeforeID (both set) or none.
func (s *Store) RunListSQL(f RunFilter) (string, []any) {
	w := runFilters(f)
	if f.BeforeID > 0 {
		runKeyset(&w, f.BeforeAt, f.BeforeID)
	}
	return w.query(runListText(s.q.get(qRunList), f), f.Limit)
}

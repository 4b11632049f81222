package testenv

import (
	"cmp"
	"database/sql"
	"fmt"
	"slices"
)

// MostAtOnce returns the largest number of the [start, end) intervals that
// query (with args) reads from db — two integer columns, such as
// started_at and finished_at in ms — that hold at one instant: at an
// instant where one ends and another starts, the end counts first. Tests
// use it to prove a concurrency limit from the rows' own times, not from a
// counter of the system under test.
func MostAtOnce(db *sql.DB, query string, args ...any) (int, error) {
	rows, err := db.Query(query, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	type event struct {
		at    int64
		delta int
	}
	var events []event
	for rows.Next() {
		var start, end int64
		if err := rows.Scan(&start, &end); err != nil {
			return 0, err
		}
		if end < start {
			return 0, fmt.Errorf("interval [%d, %d) ends before it starts", start, end)
		}
		events = append(events, event{start, +1}, event{end, -1})
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.delta, b.delta)) })
	most, cur := 0, 0
	for _, e := range events {
		cur += e.delta
		most = max(most, cur)
	}
	return most, nil
}

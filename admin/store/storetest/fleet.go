package storetest

import (
	"fmt"
	"strings"
)

// FleetCron is the SQL expression of the fleet's schedule mix for the row
// numbered seq of a fill from MariaDB's Sequence engine (FROM seq_1_to_N):
// 70 % hourly ("H * * * *": rows whose seq % 10 is 0..6), 20 % daily
// ("H H * * *": 7, 8), 10 % every minute (9). Fills of a million jobs
// (admin/store's scale test, admin/e2e's BenchmarkScaleE2E) share it.
const FleetCron = `CASE WHEN seq % 10 < 7 THEN 'H * * * *' WHEN seq % 10 < 9 THEN 'H H * * *' ELSE '* * * * *' END`

// FillSQL returns the fill statement tmpl with each {name} replaced by
// vars[name] (numbers printed in full) and {cron} by FleetCron.
func FillSQL(tmpl string, vars map[string]any) string {
	pairs := []string{"{cron}", FleetCron}
	for k, v := range vars {
		pairs = append(pairs, "{"+k+"}", fmt.Sprint(v))
	}
	return strings.NewReplacer(pairs...).Replace(tmpl)
}

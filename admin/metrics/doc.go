// Package metrics is the Prometheus instrumentation of an admin replica.
//
// New builds one Registry per admin process (never the global default
// registry) holding:
//
//   - scheduler counters read at scrape time from scheduler.Stats (firings by
//     outcome, reassigned, retried and stolen slots, epoch-fence aborts);
//   - the fire lag histogram, fed by the scheduler through
//     scheduler.Config.Observer (Metrics implements scheduler.Observer);
//   - slot results, slot durations and record counts, fed by the results
//     endpoint through api.Config.Results (Metrics implements
//     api.ResultObserver);
//   - leadership: this replica's term (LeaderTerm, called by the election
//     around each term) and the cluster's epoch from the leader row;
//   - cluster gauges counted in the platform database (non-terminal runs and
//     slots by status, executors by state, leader epoch) and the ZooKeeper
//     session probe: refreshed at scrape time, at most once per
//     Config.RefreshEvery, so that many scrapers cost one set of queries;
//   - the database pool (DBPoolCollector over sql.DB.Stats);
//   - HTTP request latency by route template, method and status class
//     (Middleware), never by raw URL;
//   - the Go runtime and process collectors.
//
// Handler serves the registry, optionally behind a bearer token. Every
// metric is listed, with example alert rules, in docs/metrics.md.
//
// Nothing here starts a goroutine: collection happens in the scraping
// request. The database counts are the named queries of queries.sql, run by
// the constants of queries_gen.go (go generate).
package metrics

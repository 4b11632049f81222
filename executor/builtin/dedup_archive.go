package builtin

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/names"
	"github.com/shardjob/shardjob/sdk/records"
)

// NameDedupArchive is the name the dedup-archive handler is registered under.
const NameDedupArchive = "dedup-archive"

// DedupArchive is the dedup-archive handler: it takes the done dedup rows
// older than the dedup horizon out of a business database's dedup_record
// table (records.Archive), each slot of the job its share of the table. It
// uses the data sources of the sql handler (--sql-datasource). See
// docs/retention.md.
type DedupArchive struct{ sql *SQL }

// NewDedupArchive returns the handler, using the data sources of s.
func NewDedupArchive(s *SQL) *DedupArchive { return &DedupArchive{sql: s} }

// dedupArchiveParams is the JSON params of the dedup-archive handler.
type dedupArchiveParams struct {
	DataSource string            `json:"datasource"`
	Mode       string            `json:"mode"`       // "archive" (default) or "delete"
	Horizon    string            `json:"horizon"`    // Go duration, default 720h (30 days)
	Jobs       map[string]string `json:"jobs"`       // job id -> horizon, or "keep"
	BatchSize  int               `json:"batch_size"` // default 1000
	PauseMS    *int64            `json:"pause_ms"`   // default 5; 0: no pause
	// LockHorizon: slot 0 deletes shard_lock rows whose lease ended longer
	// ago than this (Go duration, default 24h, at least 1h), or "keep".
	LockHorizon string `json:"lock_horizon"`

	cfg records.ArchiveConfig
}

func parseDedupArchiveParams(params string) (*dedupArchiveParams, error) {
	var p dedupArchiveParams
	if err := decodeParams(NameDedupArchive, params, &p); err != nil {
		return nil, err
	}
	if !names.Valid(p.DataSource) {
		return nil, paramsErr(NameDedupArchive, "datasource", "dedup_archive.datasource")
	}
	switch p.Mode {
	case "", "archive":
		p.cfg.Mode = records.ArchiveMove
	case "delete":
		p.cfg.Mode = records.ArchiveDelete
	default:
		return nil, paramsErr(NameDedupArchive, "mode", "dedup_archive.mode", "value", strconv.Quote(p.Mode))
	}
	horizon := func(field, s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, paramsErr(NameDedupArchive, field, "dedup_archive.horizon_format", "value", strconv.Quote(s))
		}
		if d < records.MinArchiveHorizon {
			return 0, paramsErr(NameDedupArchive, field, "dedup_archive.horizon_short", "value", d, "min", records.MinArchiveHorizon)
		}
		return d, nil
	}
	if p.Horizon != "" {
		d, err := horizon("horizon", p.Horizon)
		if err != nil {
			return nil, err
		}
		p.cfg.Horizon = d
	}
	if len(p.Jobs) > 0 {
		p.cfg.JobHorizons = make(map[int64]time.Duration, len(p.Jobs))
		for k, v := range p.Jobs {
			id, err := strconv.ParseInt(k, 10, 64)
			if err != nil || id <= 0 {
				return nil, paramsErr(NameDedupArchive, "jobs", "dedup_archive.job_key", "key", strconv.Quote(k))
			}
			if v == "keep" {
				p.cfg.JobHorizons[id] = records.KeepForever
				continue
			}
			d, err := horizon("jobs."+k, v)
			if err != nil {
				return nil, err
			}
			p.cfg.JobHorizons[id] = d
		}
	}
	switch p.LockHorizon {
	case "":
	case "keep":
		p.cfg.LockHorizon = records.KeepForever
	default:
		d, err := time.ParseDuration(p.LockHorizon)
		if err != nil || d < records.MinArchiveHorizon {
			return nil, paramsErr(NameDedupArchive, "lock_horizon", "dedup_archive.lock_horizon", "value", strconv.Quote(p.LockHorizon), "min", records.MinArchiveHorizon)
		}
		p.cfg.LockHorizon = d
	}
	if p.BatchSize < 0 || p.BatchSize > records.MaxBatchSize {
		return nil, paramsErr(NameDedupArchive, "batch_size", "dedup_archive.batch_size", "value", p.BatchSize, "max", records.MaxBatchSize, "default", records.DefaultArchiveBatchSize)
	}
	p.cfg.BatchSize = p.BatchSize
	if p.PauseMS != nil {
		switch ms := *p.PauseMS; {
		case ms < 0 || ms > 60_000:
			return nil, paramsErr(NameDedupArchive, "pause_ms", "dedup_archive.pause", "value", ms, "default", records.DefaultArchivePause)
		case ms == 0:
			p.cfg.Pause = -1
		default:
			p.cfg.Pause = time.Duration(ms) * time.Millisecond
		}
	}
	return &p, nil
}

// Handle runs one slot's share of the purge. processed counts the rows
// taken out by this attempt; a retried or re-fired slot continues where
// the rows still are.
func (h *DedupArchive) Handle(ctx context.Context, t *sdk.Task) error {
	p, err := parseDedupArchiveParams(t.Params)
	if err != nil {
		return err
	}
	db, ok := h.sql.dbs[p.DataSource]
	if !ok {
		names := make([]string, 0, len(h.sql.dbs))
		for n := range h.sql.dbs {
			names = append(names, n)
		}
		sort.Strings(names)
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return refused("data source %q is not configured on this executor (configured: %s); add --sql-datasource %s=driver:dsn", p.DataSource, have, p.DataSource)
	}
	cfg := p.cfg
	cfg.Dialect = h.sql.cfg.DataSources[p.DataSource].Driver
	cfg.Slot, cfg.SlotCount = t.Slot, t.SlotCount
	cfg.Logger = logger(t).With("handler", NameDedupArchive, "datasource", p.DataSource)
	var moved int64
	cfg.OnBatch = func(n int64) {
		moved += n
		t.AddProcessed(n)
		t.Progress(moved, 0)
	}
	res, err := records.Archive(ctx, db, cfg)
	if err != nil {
		if ctx.Err() == nil && transientSQLError(err) {
			return &RetryableError{Err: fmt.Errorf("dedup-archive on %s: %w", p.DataSource, err)}
		}
		return fmt.Errorf("dedup-archive on %s (%d rows taken out before the error): %w", p.DataSource, moved, err)
	}
	logger(t).Info("dedup archive done", "datasource", p.DataSource, "mode", cfg.Mode, "moved", res.Moved,
		"scanned", res.Scanned, "groups", res.Groups, "locks_purged", res.Locks)
	return nil
}

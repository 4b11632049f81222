// Command archiver runs records.Archive once against a database and prints
// a line per committed batch. The tests of package records run it as a real
// process to kill it with SIGKILL mid-purge and run it again.
//
//	archiver -dialect mysql -dsn 'root@tcp(127.0.0.1:3306)/biz' -slot 0 -total 1
//
// Output: "batch n=<batches> moved=<rows this batch> total=<rows so far>" per
// batch, then "archive done moved=<rows> scanned=<rows>".
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "modernc.org/sqlite"

	"github.com/shardjob/shardjob/sdk/records"
)

func main() {
	dialect := flag.String("dialect", "", "mysql, postgres or sqlite")
	dsn := flag.String("dsn", "", "database DSN")
	slot := flag.Int("slot", 0, "slot")
	total := flag.Int("total", 1, "total slots")
	batch := flag.Int("batch", 0, "batch size (0: default)")
	pause := flag.Duration("pause", 0, "pause between batches (0: default, negative: none)")
	horizon := flag.Duration("horizon", 0, "horizon (0: default)")
	jobs := flag.String("jobs", "", `per-job horizons, JSON {"<job id>": "<duration>"}, "keep" keeps forever`)
	del := flag.Bool("delete", false, "delete instead of moving to dedup_record_archive")
	flag.Parse()

	cfg := records.ArchiveConfig{
		Dialect: *dialect, Slot: *slot, SlotCount: *total, BatchSize: *batch, Pause: *pause, Horizon: *horizon,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if *del {
		cfg.Mode = records.ArchiveDelete
	}
	if *jobs != "" {
		var m map[string]string
		if err := json.Unmarshal([]byte(*jobs), &m); err != nil {
			fatal(err)
		}
		cfg.JobHorizons = map[int64]time.Duration{}
		for k, v := range m {
			id, err := strconv.ParseInt(k, 10, 64)
			if err != nil {
				fatal(err)
			}
			d := records.KeepForever
			if v != "keep" {
				if d, err = time.ParseDuration(v); err != nil {
					fatal(err)
				}
			}
			cfg.JobHorizons[id] = d
		}
	}
	driver := *dialect
	if driver == records.DialectPostgres {
		driver = "pgx"
	}
	db, err := sql.Open(driver, *dsn)
	if err != nil {
		fatal(err)
	}
	defer db.Close()
	var batches, sum int64
	cfg.OnBatch = func(moved int64) {
		batches++
		sum += moved
		fmt.Printf("batch n=%d moved=%d total=%d\n", batches, moved, sum)
	}
	res, err := records.Archive(context.Background(), db, cfg)
	if err != nil {
		fatal(err)
	}
	fmt.Printf("archive done moved=%d scanned=%d\n", res.Moved, res.Scanned)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "archiver:", err)
	os.Exit(1)
}

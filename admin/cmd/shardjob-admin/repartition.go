package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/cliflags"
)

// cmdRepartition changes an installation's number of scheduling
// partitions (store.Repartition) while every admin is stopped: with --zk
// it checks that no admin is registered in ZooKeeper; without it, the
// operator says so with --admins-stopped.
func cmdRepartition(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cliflags.New("repartition", stderr)
	driver := f.Str("db-driver", "mysql", "mysql, postgres or sqlite")
	dsn := f.Str("db-dsn", "", "database DSN (mysql, postgres) or SQLite file")
	count := f.Num("count", 0, fmt.Sprintf("the new number of scheduling partitions, 1 to %d (start every admin with --scheduling-partitions set to it afterwards)", partition.MaxCount))
	zkServers := f.Str("zk", "", "ZooKeeper servers of the installation, comma separated: the command refuses to run while any admin is registered there")
	zkRoot := f.Str("zk-root", "/shardjob", "ZooKeeper path of the installation")
	stopped := f.Flag("admins-stopped", false, "confirm that every admin of the installation is stopped (needed without --zk; standalone mode: stop the process)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *count < 1 || *count > partition.MaxCount {
		return fmt.Errorf("--count %d: give the new number of scheduling partitions, 1 to %d", *count, partition.MaxCount)
	}
	if *zkServers == "" && !*stopped {
		return errors.New("stop every admin first, then give --zk (the command checks that none is registered) or --admins-stopped: " +
			"an admin that runs during the change would go on firing by the former count")
	}
	if *zkServers != "" {
		live, err := coord.RegisteredMembers(ctx, strings.Split(*zkServers, ","), *zkRoot, 10*time.Second, slog.New(slog.DiscardHandler))
		if err != nil {
			return fmt.Errorf("--zk: %w", err)
		}
		if len(live) > 0 {
			return fmt.Errorf("admins are running (registered under %s: %s): stop every admin first", *zkRoot, strings.Join(live, ", "))
		}
	}
	st, err := store.Open(ctx, store.Config{Driver: *driver, DSN: *dsn, PartitionCount: *count})
	if err != nil {
		return fmt.Errorf("--db-dsn: %w", err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	started := time.Now()
	res, err := st.Repartition(ctx, *count)
	if err != nil {
		return fmt.Errorf("repartition: %w", err)
	}
	from := fmt.Sprint(res.From)
	if res.From == 0 {
		from = fmt.Sprintf("none recorded (%d, the default)", partition.DefaultCount)
	}
	fmt.Fprintf(stdout, "shardjob: scheduling partitions %s → %d; %d jobs placed in their new partitions in %s; "+
		"start every admin with --scheduling-partitions %d\n", from, res.To, res.Jobs, time.Since(started).Round(time.Millisecond), res.To)
	return nil
}

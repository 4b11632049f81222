package coord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// RegisteredMembers lists the IDs of the admin replicas registered under
// root (Root+"/members") right now, without registering or campaigning:
// for offline tools that must only run while no admin runs (shardjob-admin
// repartition). It waits at most timeout for a session.
func RegisteredMembers(ctx context.Context, servers []string, root string, timeout time.Duration, log *slog.Logger) ([]string, error) {
	if log == nil {
		log = slog.Default()
	}
	conn, events, err := zk.Connect(servers, timeout, zk.WithLogger(zkLogger{log}))
	if err != nil {
		return nil, fmt.Errorf("coord: zookeeper %s: %w", strings.Join(servers, ","), err)
	}
	defer conn.Close()
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	for conn.State() != zk.StateHasSession {
		select {
		case <-events:
		case <-wait.C:
			return nil, fmt.Errorf("coord: no ZooKeeper session with %s within %s", strings.Join(servers, ","), timeout)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	names, _, err := conn.Children(root + "/members")
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil // no admin ever ran under root
	}
	if err != nil {
		return nil, fmt.Errorf("coord: list the members under %s: %w", root, err)
	}
	slices.Sort(names)
	return names, nil
}

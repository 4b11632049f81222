package chaos

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/partition"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// partitionRecord is one partition as GET /api/v1/cluster reports it.
type partitionRecord struct {
	Partition int    `json:"partition"`
	Epoch     int64  `json:"epoch"`
	Holder    string `json:"holder"`
}

// partitions reads the partitions' fencing records through replica a.
func (c *cluster) partitions(a *admin) (map[int]partitionRecord, error) {
	var out struct {
		Partitions struct {
			Records []partitionRecord `json:"records"`
		} `json:"partitions"`
	}
	code, err := c.call(a, http.MethodGet, "/api/v1/cluster", nil, &out)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("%s: /api/v1/cluster answered %d", a.id, code)
	}
	recs := map[int]partitionRecord{}
	for _, r := range out.Partitions.Records {
		recs[r.Partition] = r
	}
	return recs, nil
}

// waitPartitions waits until the database records every partition as held
// by one of holders, balanced between them (⌊P/n⌋ or ⌈P/n⌉ each), and
// returns the records and how long that took.
func (c *cluster) waitPartitions(holders []string, timeout time.Duration, what string) (map[int]partitionRecord, time.Duration) {
	c.t.Helper()
	began := time.Now()
	var recs map[int]partitionRecord
	testenv.WaitFor(c.t, timeout, func() (bool, error) {
		var err error
		if recs, err = c.partitions(c.running()[0]); err != nil {
			return false, err
		}
		count := map[string]int{}
		for _, r := range recs {
			count[r.Holder]++
		}
		n, p := len(holders), partition.DefaultCount
		for _, h := range holders {
			if count[h] < p/n || count[h] > (p+n-1)/n {
				return false, fmt.Errorf("holders %v", count)
			}
		}
		return len(recs) == p && len(count) == n, fmt.Errorf("%d records, holders %v", len(recs), count)
	}, "DEFECT: the partitions were not balanced over "+strings.Join(holders, ", ")+" "+what)
	return recs, time.Since(began)
}

// requireUndisturbed checks that every partition held by one of keep before
// is held by it after at the same epoch, and returns how many partitions
// changed hands.
func requireUndisturbed(t testing.TB, before, after map[int]partitionRecord, keep []string) (moved int) {
	t.Helper()
	for p, b := range before {
		a := after[p]
		if slices.Contains(keep, b.Holder) && a.Holder == b.Holder {
			require.Equal(t, b.Epoch, a.Epoch, "partition %d of %s got a new epoch without moving", p, b.Holder)
		}
		if a.Holder != b.Holder {
			require.Greater(t, a.Epoch, b.Epoch, "partition %d changed hands without a larger epoch", p)
			moved++
		}
	}
	return moved
}

// TestChaosPartitionsFollowTheAdmins: three admin processes share the 256
// scheduling partitions through ZooKeeper, each fenced in the database.
// kill -9 of one: its partitions, and only those, move to the two others
// once its session expired; SIGSTOP of another past its session: the same,
// and once woken it drops what it held and gets a share back with new
// epochs; a restarted admin receives its share from the others. (The
// scheduler does not use the partitions yet: docs/architecture.md.)
func TestChaosPartitionsFollowTheAdmins(t *testing.T) {
	c := newCluster(t)
	c.startAdmins()
	all := []string{"admin-1", "admin-2", "admin-3"}
	three, took := c.waitPartitions(all, 60*time.Second, "after the start")
	t.Logf("partitions: balanced over 3 admins %s after the members were up", took.Round(100*time.Millisecond))

	_, leader := c.waitActiveLeaderRow()
	var others []*admin
	for _, id := range all {
		if id != leader.id {
			others = append(others, c.admins[id])
		}
	}
	victim, frozen := others[0], others[1]

	// kill -9 a replica that does not lead.
	require.NoError(t, victim.Kill())
	victim.dead = true
	survivors := []string{leader.id, frozen.id}
	two, took := c.waitPartitions(survivors, 60*time.Second, "after kill -9 of "+victim.id)
	moved := requireUndisturbed(t, three, two, survivors)
	t.Logf("kill -9 %s: %d partitions moved (it held %d) %s later; the others kept theirs at the same epochs (session timeout %s)",
		victim.id, moved, countHeld(three, victim.id), took.Round(100*time.Millisecond), zkSession)
	require.Equal(t, countHeld(three, victim.id), moved, "only the dead admin's partitions moved")

	// SIGSTOP another past its session: the leader takes its partitions.
	require.NoError(t, frozen.Freeze())
	alone, took := c.waitPartitions([]string{leader.id}, 60*time.Second, "while "+frozen.id+" is stopped")
	moved = requireUndisturbed(t, two, alone, []string{leader.id})
	t.Logf("SIGSTOP %s: its %d partitions moved to %s %s later", frozen.id, moved, leader.id, took.Round(100*time.Millisecond))
	require.Equal(t, countHeld(two, frozen.id), moved)
	require.NoError(t, frozen.Thaw())
	back, took := c.waitPartitions(survivors, 60*time.Second, "after SIGCONT of "+frozen.id)
	moved = requireUndisturbed(t, alone, back, nil)
	t.Logf("SIGCONT %s: it received %d partitions with new epochs %s later", frozen.id, moved, took.Round(100*time.Millisecond))
	dropped := grepCount(frozen.Output(), "ownership: the coordinator session may be lost; dropping every partition") +
		grepCount(frozen.Output(), "ownership: partitions moved away")
	require.Positive(t, dropped, "the woken admin dropped what it held")

	// The killed admin comes back: it takes its share from the two others.
	c.startAdmin(victim.id)
	c.waitMembers()
	again, took := c.waitPartitions(all, 60*time.Second, "after the restart of "+victim.id)
	moved = requireUndisturbed(t, back, again, survivors)
	t.Logf("restart %s: it received %d partitions %s after its members were up", victim.id, moved, took.Round(100*time.Millisecond))
}

// countHeld counts the partitions of holder.
func countHeld(recs map[int]partitionRecord, holder string) int {
	n := 0
	for _, r := range recs {
		if r.Holder == holder {
			n++
		}
	}
	return n
}

// grepCount counts the lines of out that contain s.
func grepCount(out, s string) int { return strings.Count(out, s) }

// waitActiveLeaderRow waits until the leader row names a running replica
// (no firing needed: this test creates no jobs).
func (c *cluster) waitActiveLeaderRow() (int64, *admin) {
	c.t.Helper()
	var epoch int64
	var holder string
	testenv.WaitFor(c.t, 60*time.Second, func() (bool, error) {
		var err error
		epoch, holder, err = c.leaderRow()
		return err == nil, err
	}, "no replica leads")
	return epoch, c.admins[holder]
}

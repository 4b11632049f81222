package chaos

import (
	"testing"
	"time"
)

// BenchmarkFailover measures leader failover with real processes: three
// admins (6 s ZooKeeper session), 100 jobs firing every second; each
// iteration kills the leader with SIGKILL and then freezes the next one
// with SIGSTOP past its session. Failover is the time from the signal to
// the first run created under a larger epoch. Target: < session + 2 s.
func BenchmarkFailover(b *testing.B) {
	c := newCluster(b)
	c.startAdmins()
	c.monitor()
	c.createJobs(100)
	c.waitActiveLeader()
	cfg := config{stopFor: 10 * time.Second, stoppedMax: 20 * time.Second}
	var kill, stop []time.Duration
	b.ResetTimer()
	for i := range b.N {
		p := c.killLeader(i + 1)
		kill = append(kill, p.failover)
		b.Logf("kill -9: %s", p)
		p = c.stopLeader(i+1, cfg, false)
		stop = append(stop, p.failover)
		b.Logf("SIGSTOP: %s", p)
		pause(2 * time.Second) // let the cluster settle between iterations (measured firing, not synchronisation)
	}
	b.StopTimer()
	c.stopAdmins()
	c.stopMon()
	report := func(name string, ds []time.Duration) {
		var sum, worst time.Duration
		for _, d := range ds {
			sum += d
			worst = max(worst, d)
		}
		b.ReportMetric((sum / time.Duration(len(ds))).Seconds(), name+"-mean-s")
		b.ReportMetric(worst.Seconds(), name+"-max-s")
	}
	report("kill9", kill)
	report("sigstop", stop)
}

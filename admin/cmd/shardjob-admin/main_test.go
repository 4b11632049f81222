package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestServeHelpIsGroupedByArea: serve -h lists every flag but --config
// under one of the area headings, in this order.
func TestServeHelpIsGroupedByArea(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"serve", "-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("serve -h: exit status %d\n%s", code, stderr.String())
	}
	help := stderr.String()
	at := -1
	for _, h := range []string{"Cluster", "Storage", "Security", "Scheduling", "Executors", "Alarms and metrics", "HTTP", "Logging"} {
		i := strings.Index(help, "\n"+h+":\n")
		if i < at {
			t.Fatalf("heading %q missing or out of order:\n%s", h, help)
		}
		at = i
	}
	first, _, _ := strings.Cut(help, "\nCluster:\n")
	if flags := regexp.MustCompile(`(?m)^\s+-([a-z-]+)`).FindAllStringSubmatch(first, -1); len(flags) != 1 || flags[0][1] != "config" {
		t.Errorf("flags before the first heading: %v, want only --config", flags)
	}
	for _, name := range []string{"heartbeat-interval", "start-batch", "executor-secret", "db-dsn", "zk"} {
		if !regexp.MustCompile(`(?m)^\s+-` + name + `\s`).MatchString(help) {
			t.Errorf("--%s missing from serve -h", name)
		}
	}
}

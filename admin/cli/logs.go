package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// followEvery is how often logs -f asks for new lines.
const followEvery = time.Second

func activeRun(status string) bool { return status == "pending" || status == "running" }

func cmdLogs(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("logs", env, &c)
	o := outputFlag(fs)
	follow := fs.Bool("f", false, "follow: print new lines as they arrive until the run ends")
	slot := fs.Int("slot", -1, "only the lines of this slot")
	level := fs.String("level", "", "only lines at this level or above: debug, info, warn, error")
	ref, err := oneArg(fs, args, "RUN id")
	if err != nil {
		return err
	}
	if err := checkOutput(*o); err != nil {
		return err
	}
	if *follow && *o == "json" {
		return usagef("logs: -f prints text; leave out -o json")
	}
	switch strings.ToLower(*level) {
	case "", "debug", "info", "warn", "error":
	default:
		return usagef("logs: --level %q: use debug, info, warn or error", *level)
	}
	id, err := strconv.ParseInt(ref, 10, 64)
	if err != nil || id <= 0 {
		return usagef("logs: RUN must be a run id, got %q", ref)
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	var raw json.RawMessage
	if err := cl.Do(ctx, http.MethodGet, "/api/v1/runs/"+ref, nil, &raw); err != nil {
		return err
	}
	q := url.Values{"limit": {"1000"}}
	if *slot >= 0 {
		q.Set("slot", strconv.Itoa(*slot))
	}
	if *level != "" {
		q.Set("level", strings.ToLower(*level))
	}
	// fetch reads every line after after, page by page.
	fetch := func(after int64) (apitypes.RunLogsView, error) {
		var all apitypes.RunLogsView
		for {
			q.Set("after_seq", strconv.FormatInt(after, 10))
			var p apitypes.RunLogsView
			if err := cl.Do(ctx, http.MethodGet, "/api/v1/runs/"+ref+"/logs?"+q.Encode(), nil, &p); err != nil {
				return all, err
			}
			p.Lines = append(all.Lines, p.Lines...)
			all = p
			after = p.NextAfterSeq
			if !p.HasMore {
				return all, nil
			}
		}
	}
	page, err := fetch(0)
	if err != nil {
		return err
	}
	if *o == "json" {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("decode run: %w", err)
		}
		doc["logs"], _ = json.Marshal(page.Lines)
		doc["logs_dropped"], _ = json.Marshal(page.Dropped)
		return printJSON(env.Stdout, doc)
	}
	if err := printRun(env.Stdout, raw); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout)
	printLines(env.Stdout, page.Lines)
	if len(page.Lines) == 0 && !*follow {
		fmt.Fprintln(env.Stdout, "(no log lines)")
	}
	dropped := page.Dropped
	for *follow && activeRun(page.RunStatus) {
		t := time.NewTimer(followEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		next, err := fetch(page.NextAfterSeq)
		if err != nil {
			return err
		}
		printLines(env.Stdout, next.Lines)
		page, dropped = next, next.Dropped
	}
	if *follow {
		// Lines shipped just before the run ended.
		last, err := fetch(page.NextAfterSeq)
		if err != nil {
			return err
		}
		printLines(env.Stdout, last.Lines)
		dropped = last.Dropped
		fmt.Fprintf(env.Stdout, "run %d %s\n", id, apitypes.RunStatusPhrase(last.RunStatus))
	}
	if n := dropped.Executor + dropped.Cap; n > 0 {
		fmt.Fprintf(env.Stdout, "%d lines dropped (%d by executors whose log buffer was full, %d over the run's log cap)\n", n, dropped.Executor, dropped.Cap)
	}
	return nil
}

// printLines writes one line per log line: time (UTC), level, slot,
// message and attributes.
func printLines(w io.Writer, lines []apitypes.LogLineView) {
	for _, l := range lines {
		attrs := ""
		if kv := orderedAttrs(l.Attrs); len(kv) > 0 {
			attrs = " " + strings.Join(kv, " ")
		}
		fmt.Fprintf(w, "%s %-5s slot=%d %s%s\n", l.At.UTC().Format("2006-01-02T15:04:05.000Z"), l.Level, l.Slot, oneLine(l.Message), attrs)
	}
}

// orderedAttrs returns key=value pairs of a JSON object in document order.
func orderedAttrs(raw json.RawMessage) []string {
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return out
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return out
		}
		val := string(v)
		var s string
		if json.Unmarshal(v, &s) == nil {
			val = s
			if strings.ContainsAny(s, " \t\n\"=") {
				val = strconv.Quote(s)
			}
		}
		out = append(out, fmt.Sprintf("%v=%s", k, val))
	}
	return out
}

// printRun writes the run's summary and the table of its attempts.
func printRun(w io.Writer, raw json.RawMessage) error {
	var out apitypes.RunDetail
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("decode run: %w", err)
	}
	r := out.Run
	fmt.Fprintf(w, "run %d of %s/%s: %s (trigger %s, scheduled %s UTC, slots %d ok / %d failed / %d)\n",
		r.ID, r.App, r.JobName, r.Status, r.Trigger, timeCell(&r.ScheduledAt), r.SlotsSucceeded, r.SlotsFailed, r.SlotCount)
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
	}
	var rows [][]string
	for _, a := range out.Attempts {
		ex := "-" // by name (instance id); by id when it has none
		switch {
		case a.Executor != "":
			ex = a.Executor
		case a.ExecutorID != nil:
			ex = strconv.FormatInt(*a.ExecutorID, 10)
		}
		dur := "-"
		if a.StartedAt != nil && a.FinishedAt != nil {
			dur = a.FinishedAt.Sub(*a.StartedAt).String()
		}
		st := a.Status
		if !a.Current {
			st += " (superseded)"
		}
		rows = append(rows, []string{strconv.Itoa(a.Slot), strconv.Itoa(a.Attempt), strconv.FormatInt(a.Token, 10), ex, st,
			fmt.Sprintf("%d/%d/%d/%d", a.Processed, a.Skipped, a.Failed, a.Uncertain), dur, oneLine(a.Error)})
	}
	return table(w, []string{"SLOT", "ATTEMPT", "TOKEN", "EXECUTOR", "STATUS", "RECORDS OK/SKIP/FAIL/UNCERTAIN", "DURATION", "ERROR"}, rows)
}

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

	"github.com/shardjob/shardjob/admin/apitypes"
)

// getDead lists the dead letters the filters select, newest first, up to
// limit (docs/failures.md, "Dead letters"); the table says when more match.
func getDead(ctx context.Context, cl *Client, w io.Writer, q url.Values, asJSON bool) error {
	var out struct {
		Dead       []json.RawMessage `json:"dead"`
		NextCursor string            `json:"next_cursor"`
		Count      *int64            `json:"count"`
		CountExact *bool             `json:"count_exact"`
	}
	if err := cl.Do(ctx, http.MethodGet, "/api/v1/dead?"+q.Encode(), nil, &out); err != nil {
		return err
	}
	if asJSON {
		return printJSON(w, nonNil(out.Dead))
	}
	var rows [][]string
	for _, raw := range out.Dead {
		var d apitypes.DeadLetter
		if err := json.Unmarshal(raw, &d); err != nil {
			return fmt.Errorf("decode dead letter: %w", err)
		}
		replayed := "-"
		if d.ReplayedAt != nil {
			replayed = d.ReplayedBy + " " + timeCell(d.ReplayedAt)
			if d.ReplayToken != nil {
				replayed += " → " + strconv.FormatInt(*d.ReplayToken, 10)
			}
		}
		rows = append(rows, []string{strconv.FormatInt(d.ID, 10), d.App, d.JobName, strconv.FormatInt(d.RunID, 10), strconv.Itoa(d.Slot),
			strconv.FormatInt(d.Token, 10), d.ErrorClass, timeCell(&d.DiedAt), cutLine(d.Error, 60), replayed})
	}
	if err := table(w, []string{"ID", "APP", "JOB", "RUN", "SLOT", "TOKEN", "CLASS", "DIED (UTC)", "ERROR", "REPLAYED"}, rows); err != nil {
		return err
	}
	if out.NextCursor != "" && out.Count != nil {
		more := strconv.FormatInt(*out.Count, 10)
		if out.CountExact != nil && !*out.CountExact {
			more = "more than " + more
		}
		_, err := fmt.Fprintf(w, "(%d shown of %s: raise --limit or narrow the filters)\n", len(rows), more)
		return err
	}
	return nil
}

// cutLine is s on one line, cut to at most n runes.
func cutLine(s string, n int) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// cmdReplay runs dead slots again: replay dead ID... [--force] [--params
// TEXT], TEXT the params text (as a job's) or a JSON object.
func cmdReplay(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("replay", env, &c)
	o := outputFlag(fs)
	force := fs.Bool("force", false, "replay letters that were replayed already")
	params := fs.String("params", "", "the params the replayed slots run with instead of theirs: text as a job's params (records=10) or a JSON object")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || pos[0] != "dead" {
		return usagef("replay: want 'dead ID...' (the ids of GET /api/v1/dead, shardjobctl get dead)")
	}
	if err := checkOutput(*o); err != nil {
		return err
	}
	req := apitypes.ReplayRequest{Force: *force}
	for _, a := range pos[1:] {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id <= 0 {
			return usagef("replay dead: %q is not a dead letter id (a positive integer)", a)
		}
		req.IDs = append(req.IDs, id)
	}
	if *params != "" {
		req.Params, err = replayParams(*params)
		if err != nil {
			return err
		}
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	var out apitypes.ReplayAnswer
	if err := cl.Do(ctx, http.MethodPost, "/api/v1/dead/replay", req, &out); err != nil {
		return err
	}
	if *o == "json" {
		return printJSON(env.Stdout, out.Replayed)
	}
	for _, d := range out.Replayed {
		tok := int64(0)
		if d.ReplayToken != nil {
			tok = *d.ReplayToken
		}
		if _, err := fmt.Fprintf(env.Stdout, "dead letter %d: slot %d of run %d runs again (token %d)\n", d.ID, d.Slot, d.RunID, tok); err != nil {
			return err
		}
	}
	return nil
}

// replayParams is --params as the API takes it: a JSON object when the
// text starts with "{" (which must then be one), else the text as a JSON
// string.
func replayParams(text string) (json.RawMessage, error) {
	if strings.HasPrefix(strings.TrimSpace(text), "{") {
		if !json.Valid([]byte(text)) {
			return nil, usagef("replay dead: --params starts like a JSON object but is not one: give an object such as '{\"day\":\"2026-01-02\"}' or text such as records=10")
		}
		return json.RawMessage(text), nil
	}
	b, err := json.Marshal(text)
	if err != nil {
		return nil, fmt.Errorf("replay dead: --params: %w", err)
	}
	return b, nil
}

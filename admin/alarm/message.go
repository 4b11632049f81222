package alarm

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/store"
)

// Message is what a channel sends: one alarm, a digest of the alarms of one
// throttling window, or a test message. Title and Text are plain text ready
// to show; the other fields are there for receivers that want structure
// (the generic webhook sends all of them as JSON).
type Message struct {
	// Title is one line, starting with "shardjob" (a keyword robots can
	// filter on).
	Title string `json:"title"`
	// Text is the plain-text body, several lines.
	Text string `json:"text"`
	// Severity is the worst severity in the message: critical, error,
	// warning or info.
	Severity string `json:"severity"`
	// Digest is true when the message aggregates several alarms.
	Digest bool `json:"digest"`
	// Test is true for messages sent by the channel test endpoint.
	Test bool `json:"test,omitempty"`
	// Count is the number of alarms the message covers.
	Count int `json:"count"`
	// JobID is the job the alarms belong to (0: alarms without a job).
	JobID int64 `json:"job_id,omitempty"`
	// Kind is the alarm kind when the message covers alarms without a job.
	Kind string `json:"kind,omitempty"`
	// Summary counts the alarms per kind and job, most frequent first.
	Summary []Count `json:"summary,omitempty"`
	// Alarms are the oldest alarms of the message (all of them when Count
	// is small; see Config.SampleSize).
	Alarms []Item `json:"alarms"`
	// To overrides the recipients of an email channel (per-job email
	// routes). Other channels ignore it.
	To []string `json:"-"`
}

// Item is one alarm in a message.
type Item struct {
	ID       int64     `json:"id"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Severity string    `json:"severity"`
	JobID    int64     `json:"job_id,omitempty"`
	RunID    int64     `json:"run_id,omitempty"`
	// GroupID is the alarm's group: the later alarms of the group send no
	// message of their own (GET /api/v1/alarm-groups/{id}/alarms lists them).
	GroupID int64  `json:"group_id,omitempty"`
	Message string `json:"message"`
}

// Count is the number of alarms of one kind (and job) in a digest.
type Count struct {
	Kind  string `json:"kind"`
	JobID int64  `json:"job_id,omitempty"`
	N     int    `json:"n"`
}

var severityRank = map[string]int{"info": 1, "warning": 2, "error": 3, "critical": 4}

func worse(a, b string) string {
	if severityRank[b] > severityRank[a] {
		return b
	}
	return a
}

func onJob(id int64) string {
	if id == 0 {
		return ""
	}
	return " on job " + strconv.FormatInt(id, 10)
}

// maxSummaryInTitle caps the kinds listed in a digest's title.
const maxSummaryInTitle = 4

// render turns a claimed batch into a message.
func render(b store.AlarmBatch) Message {
	m := Message{Count: b.Count, Digest: b.Count > 1, JobID: b.JobID.Int64, Kind: b.Kind}
	for _, a := range b.Alarms {
		m.Alarms = append(m.Alarms, Item{ID: a.ID, At: time.UnixMilli(a.At).UTC(), Kind: a.Kind, Severity: a.Severity,
			JobID: a.JobID.Int64, RunID: a.RunID.Int64, GroupID: a.GroupID.Int64, Message: a.Message})
		m.Severity = worse(m.Severity, a.Severity)
	}
	for _, c := range b.Counts {
		m.Summary = append(m.Summary, Count{Kind: c.Kind, JobID: c.JobID.Int64, N: c.N})
	}
	if m.Severity == "" {
		m.Severity = "error"
	}
	var text strings.Builder
	if !m.Digest && len(m.Alarms) == 1 {
		a := m.Alarms[0]
		m.Title = fmt.Sprintf("shardjob [%s] %s%s", a.Severity, a.Kind, onJob(a.JobID))
		text.WriteString(a.Message)
		fmt.Fprintf(&text, "\n\nalarm #%d at %s", a.ID, a.At.Format(time.RFC3339))
		if a.RunID != 0 {
			fmt.Fprintf(&text, ", run %d", a.RunID)
		}
		if a.GroupID != 0 {
			fmt.Fprintf(&text, "\nfurther alarms of its group %d are not sent one by one: see the console's Alarms page", a.GroupID)
		}
		m.Text = text.String()
		return m
	}
	parts := make([]string, 0, maxSummaryInTitle+1)
	for i, c := range m.Summary {
		if i == maxSummaryInTitle {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s%s", c.N, c.Kind, onJob(c.JobID)))
	}
	m.Title = fmt.Sprintf("shardjob [%s] %d alarms: %s", m.Severity, m.Count, strings.Join(parts, ", "))
	fmt.Fprintf(&text, "%d alarms since the last message on this channel:\n", m.Count)
	for _, c := range m.Summary {
		fmt.Fprintf(&text, "  %d %s%s\n", c.N, c.Kind, onJob(c.JobID))
	}
	fmt.Fprintf(&text, "\nthe first %d:\n", len(m.Alarms))
	for _, a := range m.Alarms {
		fmt.Fprintf(&text, "  #%d %s [%s] %s: %s\n", a.ID, a.At.Format(time.RFC3339), a.Severity, a.Kind, a.Message)
	}
	if rest := m.Count - len(m.Alarms); rest > 0 {
		fmt.Fprintf(&text, "  … and %d more (console: Alarms, or GET /api/v1/alarms)\n", rest)
	}
	m.Text = strings.TrimRight(text.String(), "\n")
	return m
}

// testMessage is what the channel test endpoint sends.
func testMessage(channel, actor, replica string) Message {
	return Message{
		Title:    "shardjob [info] test message",
		Text:     fmt.Sprintf("Test message for alarm channel %q, requested by %s on admin %s. If you can read this, the channel works.", channel, actor, replica),
		Severity: "info", Test: true, Alarms: []Item{},
	}
}

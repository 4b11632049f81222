package cli

import (
	"github.com/shardjob/shardjob/internal/names"

	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxJobsFileBytes bounds a jobs file.
const MaxJobsFileBytes = 4 << 20

// JobDef is one job of a jobs file: the fields of the API's job definition
// that a file manages. A job is identified by App and Name; omitted fields
// take the server's defaults (see Normalize), so a file states the whole
// definition and applying it twice changes nothing. Child jobs and the
// paused flag are not managed by files (pause and resume are operations,
// child jobs refer to ids): apply keeps what the server has.
type JobDef struct {
	App                string `yaml:"app" json:"app"`
	Name               string `yaml:"name" json:"name"`
	Description        string `yaml:"description" json:"description"`
	Handler            string `yaml:"handler" json:"handler"`
	Cron               string `yaml:"cron" json:"cron"`
	TimeZone           string `yaml:"time_zone" json:"time_zone"`
	Slots              int    `yaml:"slots" json:"slots"`
	SlotParams         string `yaml:"slot_params" json:"slot_params"`
	Params             string `yaml:"params" json:"params"`
	MisfirePolicy      string `yaml:"misfire_policy" json:"misfire_policy"`
	MisfireThresholdMS int64  `yaml:"misfire_threshold_ms" json:"misfire_threshold_ms"`
	MaxCatchUp         int    `yaml:"max_catch_up" json:"max_catch_up"`
	OverlapPolicy      string `yaml:"overlap_policy" json:"overlap_policy"`
	TimeoutMS          int64  `yaml:"timeout_ms" json:"timeout_ms"`
	RetryMax           int    `yaml:"retry_max" json:"retry_max"`
	RetryBackoffMS     int64  `yaml:"retry_backoff_ms" json:"retry_backoff_ms"`
	DedupScope         string `yaml:"dedup_scope" json:"dedup_scope"`
	UncertainPolicy    string `yaml:"uncertain_policy" json:"uncertain_policy"`
	RecordMaxAttempts  int    `yaml:"record_max_attempts" json:"record_max_attempts"`
	Enabled            *bool  `yaml:"enabled" json:"enabled"`

	line int // where the job starts in its file (1-based; 0: not from a file)
}

// Key is "app/name", the identity of a job.
func (d JobDef) Key() string { return d.App + "/" + d.Name }

// Line is the line of the file the job starts at (0 when not from a file).
func (d JobDef) Line() int { return d.line }

// Defaults the admin fills in for omitted fields (admin/jobdef.Validate; a
// test keeps the two in step).
const (
	DefaultTimeZone           = "UTC"
	DefaultSlots              = 1
	DefaultMisfirePolicy      = "run_once"
	DefaultOverlapPolicy      = "allow"
	DefaultMisfireThresholdMS = 60_000
	DefaultMaxCatchUp         = 10
	DefaultRetryBackoffMS     = 1000
)

// Normalize returns d with the server's defaults in place of omitted fields
// and policies in their canonical spelling, so that it compares equal to the
// job the server stores for it.
func (d JobDef) Normalize() JobDef {
	if d.TimeZone == "" {
		d.TimeZone = DefaultTimeZone
	}
	if d.Slots == 0 {
		d.Slots = DefaultSlots
	}
	d.MisfirePolicy = canonicalPolicy(d.MisfirePolicy, DefaultMisfirePolicy)
	d.OverlapPolicy = canonicalPolicy(d.OverlapPolicy, DefaultOverlapPolicy)
	if d.MisfireThresholdMS == 0 {
		d.MisfireThresholdMS = DefaultMisfireThresholdMS
	}
	if d.MaxCatchUp == 0 {
		d.MaxCatchUp = DefaultMaxCatchUp
	}
	if d.RetryBackoffMS == 0 {
		d.RetryBackoffMS = DefaultRetryBackoffMS
	}
	if d.Enabled == nil {
		t := true
		d.Enabled = &t
	}
	return d
}

func canonicalPolicy(s, def string) string {
	s = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
	if s == "" {
		return def
	}
	return s
}

// FileError is a problem in a jobs file, at a line (and column, when known).
type FileError struct {
	File    string
	Line    int
	Column  int
	Msg     string
	Snippet string // the lines around the problem, when known
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	b.WriteString(": " + e.Msg)
	if e.Snippet != "" {
		b.WriteString("\n" + e.Snippet)
	}
	return b.String()
}

const knownFields = "app, name, description, handler, cron, time_zone, slots, slot_params, params, misfire_policy, " +
	"misfire_threshold_ms, max_catch_up, overlap_policy, timeout_ms, retry_max, retry_backoff_ms, dedup_scope, " +
	"uncertain_policy, record_max_attempts, enabled"

// LoadJobs parses a jobs file: a YAML list of job definitions. Decoding is
// strict: an unknown field, a duplicate key, a value of the wrong type or
// a job listed twice is an error naming the line. Each job needs app, name,
// handler and cron; the admin validates the rest (apply asks it before
// changing anything). An empty file is an empty list.
func LoadJobs(file string, data []byte) ([]JobDef, error) {
	if len(data) > MaxJobsFileBytes {
		return nil, &FileError{File: file, Msg: fmt.Sprintf("%d bytes; a jobs file may have at most %d", len(data), MaxJobsFileBytes)}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(file, err)
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return nil, &FileError{File: file, Line: line(doc.Body), Msg: "more than one YAML document; put every job in one list"}
		}
		body = doc.Body
	}
	if body == nil {
		return nil, nil
	}
	seq, ok := body.(*ast.SequenceNode)
	if !ok {
		return nil, &FileError{File: file, Line: line(body), Msg: "the file must be a YAML list of jobs, each item starting with '- app: …'"}
	}
	out := make([]JobDef, 0, len(seq.Values))
	seen := map[string]int{}
	for _, item := range seq.Values {
		if item == nil {
			continue
		}
		if _, isMap := item.(*ast.MappingNode); !isMap {
			return nil, &FileError{File: file, Line: line(item), Msg: "a job must be a mapping of fields (app: …, name: …); anchors and aliases are not supported"}
		}
		var d JobDef
		if err := yaml.NodeToValue(item, &d, yaml.DisallowUnknownField()); err != nil {
			return nil, yamlError(file, err)
		}
		d.line = line(item)
		if err := checkDef(d); err != nil {
			return nil, &FileError{File: file, Line: d.line, Msg: err.Error()}
		}
		if first, dup := seen[d.Key()]; dup {
			return nil, &FileError{File: file, Line: d.line, Msg: fmt.Sprintf("job %s is already defined at line %d", d.Key(), first)}
		}
		seen[d.Key()] = d.line
		out = append(out, d)
	}
	return out, nil
}

func checkDef(d JobDef) error {
	var missing []string
	for _, f := range []struct{ name, v string }{{"app", d.App}, {"name", d.Name}, {"handler", d.Handler}, {"cron", d.Cron}} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("job %q is missing %s", d.Key(), strings.Join(missing, ", "))
	}
	for _, f := range []struct{ name, v string }{{"app", d.App}, {"name", d.Name}} {
		if !names.Valid(f.v) {
			return fmt.Errorf("%s %q: %s", f.name, f.v, names.Rule)
		}
	}
	return nil
}

func line(n ast.Node) int {
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

// yamlError turns a go-yaml error into a FileError at its position.
func yamlError(file string, err error) error {
	fe := &FileError{File: file, Msg: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		fe.Msg = ye.GetMessage()
		if t := ye.GetToken(); t != nil && t.Position != nil {
			fe.Line, fe.Column = t.Position.Line, t.Position.Column
		}
		fe.Snippet = ye.FormatError(false, true)
		if i := strings.Index(fe.Snippet, "\n"); i >= 0 {
			fe.Snippet = fe.Snippet[i+1:] // the first line repeats the message
		} else {
			fe.Snippet = ""
		}
		var uf *yaml.UnknownFieldError
		if errors.As(err, &uf) {
			fe.Msg += " (a job has the fields " + knownFields + ")"
		}
	}
	return fe
}

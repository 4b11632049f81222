package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/sdk/names"
)

// MaxJobsFileBytes bounds a jobs file.
const MaxJobsFileBytes = 4 << 20

// FileJob is one job of a jobs file: the API's job definition
// (apitypes.JobDef) and the line it starts at. A job is identified by App
// and Name; omitted fields take the server's defaults (see Normalize), so a
// file states the whole definition and applying it twice changes nothing.
// Child jobs and the paused flag are not managed by files (pause and resume
// are operations, child jobs refer to ids): apply keeps what the server
// has.
type FileJob struct {
	apitypes.JobDef

	line int // where the job starts in its file (1-based; 0: not from a file)
}

// Line is the line of the file the job starts at (0 when not from a file).
func (d FileJob) Line() int { return d.line }

// Normalize returns d with the server's defaults (apitypes.WithDefaults) in
// place of omitted fields and policies in their canonical spelling, so that
// it compares equal to the job the server stores for it.
func Normalize(d apitypes.JobDef) apitypes.JobDef {
	d.MisfirePolicy = canonicalPolicy(d.MisfirePolicy)
	d.OverlapPolicy = canonicalPolicy(d.OverlapPolicy)
	return d.WithDefaults()
}

func canonicalPolicy(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "-", "_")
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

// knownFields lists the fields of a job in a file, for the message about
// an unknown one.
var knownFields = strings.Join(defFields(), ", ")

// LoadJobs parses a jobs file and returns its jobs (LoadFile: the
// workflows of the file are checked too, and left out).
func LoadJobs(file string, data []byte) ([]FileJob, error) {
	f, err := LoadFile(file, data)
	return f.Jobs, err
}

// File is what a jobs file holds: jobs, workflows (items of kind
// workflow) and apps (items of kind app), each in file order.
type File struct {
	Jobs      []FileJob
	Workflows []FileWorkflow
	Apps      []FileApp
}

// LoadFile parses a jobs file: a YAML list of definitions, each a job or,
// with "kind: workflow", a workflow, or with "kind: app", an app (kind job
// is the default). Decoding is
// strict: an unknown field, a duplicate key, a value of the wrong type or
// a job or workflow listed twice is an error naming the line. Each job
// needs app, name, handler and cron, each workflow app, name and nodes;
// the admin validates the rest (apply asks it, and checks a workflow's
// graph here, before changing anything). An empty file is an empty list.
func LoadFile(file string, data []byte) (File, error) {
	var out File
	if len(data) > MaxJobsFileBytes {
		return out, &FileError{File: file, Msg: fmt.Sprintf("%d bytes; a jobs file may have at most %d", len(data), MaxJobsFileBytes)}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return out, yamlError(file, err)
	}
	var body ast.Node
	for _, doc := range f.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			return out, &FileError{File: file, Line: line(doc.Body), Msg: "more than one YAML document; put every job in one list"}
		}
		body = doc.Body
	}
	if body == nil {
		return out, nil
	}
	seq, ok := body.(*ast.SequenceNode)
	if !ok {
		return out, &FileError{File: file, Line: line(body), Msg: "the file must be a YAML list of jobs, each item starting with '- app: …'"}
	}
	seen := map[string]int{}
	for _, item := range seq.Values {
		if item == nil {
			continue
		}
		m, isMap := item.(*ast.MappingNode)
		if !isMap {
			return out, &FileError{File: file, Line: line(item), Msg: "a job must be a mapping of fields (app: …, name: …); anchors and aliases are not supported"}
		}
		kind, fields, err := splitKind(file, m)
		if err != nil {
			return out, err
		}
		var key string
		switch kind {
		case "", "job":
			var def apitypes.JobDef
			if err := yaml.NodeToValue(fields, &def, yaml.DisallowUnknownField()); err != nil {
				return out, yamlError(file, err)
			}
			d := FileJob{JobDef: def, line: line(item)}
			if err := checkDef(def); err != nil {
				return out, &FileError{File: file, Line: d.line, Msg: err.Error()}
			}
			key = "job " + d.Key()
			out.Jobs = append(out.Jobs, d)
		case "workflow":
			var def apitypes.WorkflowDef
			if err := yaml.NodeToValue(fields, &def, yaml.DisallowUnknownField()); err != nil {
				return out, workflowYAMLError(file, err)
			}
			d := FileWorkflow{WorkflowDef: def, line: line(item)}
			if err := checkWorkflowDef(def); err != nil {
				return out, &FileError{File: file, Line: d.line, Msg: err.Error()}
			}
			key = "workflow " + d.Key()
			out.Workflows = append(out.Workflows, d)
		case "app":
			var def AppDef
			if err := yaml.NodeToValue(fields, &def, yaml.DisallowUnknownField()); err != nil {
				return out, yamlError(file, err)
			}
			if strings.TrimSpace(def.Name) == "" {
				return out, &FileError{File: file, Line: line(item), Msg: "an app needs a name"}
			}
			d := FileApp{AppDef: def, line: line(item)}
			key = "app " + d.Key()
			out.Apps = append(out.Apps, d)
		default:
			return out, &FileError{File: file, Line: line(item), Msg: fmt.Sprintf("kind %q: an item is a job (kind: job, the default), a workflow (kind: workflow) or an app (kind: app)", kind)}
		}
		if first, dup := seen[key]; dup {
			return out, &FileError{File: file, Line: line(item), Msg: fmt.Sprintf("%s is already defined at line %d", key, first)}
		}
		seen[key] = line(item)
	}
	return out, nil
}

// splitKind returns the value of an item's kind field ("" without one) and
// the item without it.
func splitKind(file string, m *ast.MappingNode) (string, *ast.MappingNode, error) {
	kind := ""
	rest := make([]*ast.MappingValueNode, 0, len(m.Values))
	for _, v := range m.Values {
		if t := v.Key.GetToken(); t == nil || t.Value != "kind" {
			rest = append(rest, v)
			continue
		}
		s, ok := v.Value.(*ast.StringNode)
		if !ok {
			return "", nil, &FileError{File: file, Line: line(v), Msg: "kind: job, workflow or app"}
		}
		kind = s.Value
	}
	cp := *m
	cp.Values = rest
	return kind, &cp, nil
}

func checkDef(d apitypes.JobDef) error {
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
	return yamlErrorHint(file, err, " (a job has the fields "+knownFields+")")
}

// yamlErrorHint is yamlError with hint after the message of an unknown
// field.
func yamlErrorHint(file string, err error, hint string) error {
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
			fe.Msg += hint
		}
	}
	return fe
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// Exit codes of shardjobctl.
const (
	ExitOK       = 0 // done
	ExitFailure  = 1 // the admin refused or failed the request, or could not be reached
	ExitUsage    = 2 // wrong command line, or invalid input (jobs file, job definition)
	ExitAuth     = 3 // the token was refused (401) or lacks the role (403)
	ExitNotFound = 4 // the job, run, calendar or workflow does not exist
)

// Env is what a run of the CLI reads and writes; tests pass their own.
type Env struct {
	Stdout, Stderr io.Writer
	Stdin          io.Reader
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// HTTP is the client for the admin (a client with a 30s timeout when nil).
	HTTP *http.Client
}

const usage = `usage: shardjobctl [--server URL] [--token TOKEN] [--config FILE] <command> [flags]

commands:
  apply -f FILE [--dry-run]        create or update the apps, jobs and workflows of a
                                   YAML file ("-" reads stdin)
  get jobs|runs|executors|apps|calendars|workflows|dead [-o json]
                                   list (jobs: --app A --handler H --state S --schedule K
                                   --search NAME [--contains] --sort name|next_fire|id;
                                   runs: --job JOB --app A --status S --trigger K
                                   --from T --to T --limit N; dead: --app A --job JOB
                                   --handler H --class C --from T --to T --limit N)
  replay dead ID... [--force] [--params JSON] [-o json]
                                   run dead slots again as new attempts of their runs
  trigger JOB [--param k=v]...     run a job now (--params S replaces all params)
  trigger workflow WORKFLOW [--business-date D] [--params JSON] [--param k=v]...
                                   run a workflow now (params laid over every node's)
  backfill job JOB|workflow WORKFLOW --from D --to D [--parallel N]
                                   [--newest-first] [--only-missing] [--dry-run]
                                   [--params JSON] [-o json]
                                   one run per business date of the range
  pause JOB [--until T] | resume JOB  stop or restart a job's schedule
                                   (--until: an RFC 3339 instant; it resumes by itself then)
  logs RUN [-f] [--slot N] [--level L] [-o json]
                                   a run, the attempts of its slots and the
                                   lines its handlers logged (-f: follow)
  calendar import --app APP|--global [--name N] [--week W] FILE
                                   create or replace a business calendar from
                                   an .ics or .csv file (unchanged: nothing)
  calendar export CAL              its days as CSV (CAL: id, app/name, or the
                                   name of a global calendar)

  delete workflow WORKFLOW         delete a workflow (its runs stay)

JOB and WORKFLOW are an id or app/name; RUN is a run id.
The server and token come from the flags, else SHARDJOB_SERVER and
SHARDJOB_TOKEN, else the config file (--config, SHARDJOB_CONFIG, or
$XDG_CONFIG_HOME/shardjob/config.yaml) with the keys server and token.

exit status: 0 ok, 1 request failed, 2 usage or invalid input,
3 token refused or role too low, 4 job, run, calendar or workflow not found.
`

// usageError is a wrong command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// Main runs the CLI with args (without the program name) and returns the
// exit status.
func Main(args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.Stdin == nil {
		env.Stdin = os.Stdin
	}
	if env.HTTP == nil {
		env.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	err := run(context.Background(), args, env)
	code := ExitCode(err)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(env.Stderr, "shardjobctl: "+err.Error())
		var ue *usageError
		if errors.As(err, &ue) {
			fmt.Fprint(env.Stderr, "\n"+usage)
		}
	}
	return code
}

// ExitCode maps an error of a command to the exit status.
func ExitCode(err error) int {
	var (
		ue *usageError
		fe *FileError
		ae *APIError
		ve *invalidJobsError
	)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue), errors.As(err, &fe), errors.As(err, &ve):
		return ExitUsage
	case errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden):
		return ExitAuth
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		return ExitNotFound
	}
	return ExitFailure
}

// conn holds the connection settings.
type conn struct{ server, token, config string }

func (c *conn) register(fs *flag.FlagSet) {
	fs.StringVar(&c.server, "server", c.server, "admin URL, e.g. http://127.0.0.1:8080 (env SHARDJOB_SERVER)")
	fs.StringVar(&c.token, "token", c.token, "API key sjt_… (env SHARDJOB_TOKEN)")
	fs.StringVar(&c.config, "config", c.config, "config file with server: and token: (env SHARDJOB_CONFIG)")
}

// fileConfig is the config file.
type fileConfig struct {
	Server string `yaml:"server"`
	Token  string `yaml:"token"`
}

// client resolves the settings: flags, then environment, then config file.
func (c conn) client(env Env) (*Client, error) {
	server, token := c.server, c.token
	if server == "" {
		server = env.Getenv("SHARDJOB_SERVER")
	}
	if token == "" {
		token = env.Getenv("SHARDJOB_TOKEN")
	}
	path, explicit := c.config, c.config != ""
	if path == "" {
		if path = env.Getenv("SHARDJOB_CONFIG"); path != "" {
			explicit = true
		}
	}
	if path == "" {
		if dir := env.Getenv("XDG_CONFIG_HOME"); dir != "" {
			path = filepath.Join(dir, "shardjob", "config.yaml")
		} else if home := env.Getenv("HOME"); home != "" {
			path = filepath.Join(home, ".config", "shardjob", "config.yaml")
		}
	}
	if (server == "" || token == "") && path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			var fc fileConfig
			if err := yaml.UnmarshalWithOptions(data, &fc, yaml.Strict()); err != nil {
				return nil, yamlError(path, err)
			}
			if server == "" {
				server = fc.Server
			}
			if token == "" && fc.Token != "" {
				if err := privateFile(path); err != nil {
					return nil, err
				}
				token = fc.Token
			}
		case explicit || !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("config file: %w", err)
		}
	}
	if server == "" {
		return nil, usagef("no server: pass --server URL, set SHARDJOB_SERVER, or put 'server:' in %s", path)
	}
	if u, err := url.Parse(server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("server %q: expected a URL such as http://127.0.0.1:8080", server)
	}
	if token == "" {
		return nil, usagef("no token: pass --token, set SHARDJOB_TOKEN, or put 'token:' in %s (create an API key in the console or with POST /api/v1/api-keys)", path)
	}
	return &Client{Base: strings.TrimRight(server, "/"), Token: token, HTTP: env.HTTP}, nil
}

// privateFile refuses a config file whose token others may read (group or
// world permissions), as ssh refuses such a key: the token acts as its
// owner.
func privateFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return usagef("config file %s holds a token and others may read it (mode %04o): run 'chmod 600 %s'", path, perm, path)
	}
	return nil
}

// parseArgs parses flags placed anywhere among the positional arguments
// ("trigger 7 --param a=1" as well as "trigger --param a=1 7"); "--" ends
// the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func newFlagSet(name string, env Env, c *conn) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	c.register(fs)
	return fs
}

func run(ctx context.Context, args []string, env Env) error {
	var c conn
	global := newFlagSet("shardjobctl", env, &c)
	global.Usage = func() { fmt.Fprint(env.Stderr, usage) }
	if err := global.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%v", err)
	}
	args = global.Args()
	if len(args) == 0 {
		return usagef("no command")
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "apply":
		return cmdApply(ctx, args, env, c)
	case "get":
		return cmdGet(ctx, args, env, c)
	case "trigger":
		return cmdTrigger(ctx, args, env, c)
	case "backfill":
		return cmdBackfill(ctx, args, env, c)
	case "pause", "resume":
		return cmdSwitch(ctx, cmd, args, env, c)
	case "logs":
		return cmdLogs(ctx, args, env, c)
	case "calendar":
		return cmdCalendar(ctx, args, env, c)
	case "replay":
		return cmdReplay(ctx, args, env, c)
	case "delete":
		return cmdDelete(ctx, args, env, c)
	case "help", "-h", "--help":
		fmt.Fprint(env.Stdout, usage)
		return nil
	}
	return usagef("unknown command %q", cmd)
}

// listJobs reads every job the query parameters filter select (nil:
// every job), page by page (the server's cursor).
func listJobs(ctx context.Context, cl *Client, filter url.Values) ([]json.RawMessage, []apitypes.Job, error) {
	const page = 500
	var raws []json.RawMessage
	var jobs []apitypes.Job
	q := url.Values{}
	for k, v := range filter {
		q[k] = v
	}
	q.Set("limit", strconv.Itoa(page))
	for {
		var out struct {
			Jobs       []json.RawMessage `json:"jobs"`
			NextCursor string            `json:"next_cursor"`
		}
		if err := cl.Do(ctx, http.MethodGet, "/api/v1/jobs?"+q.Encode(), nil, &out); err != nil {
			return nil, nil, err
		}
		for _, raw := range out.Jobs {
			var j apitypes.Job
			if err := json.Unmarshal(raw, &j); err != nil {
				return nil, nil, fmt.Errorf("decode job: %w", err)
			}
			raws = append(raws, raw)
			jobs = append(jobs, j)
		}
		if out.NextCursor == "" {
			return raws, jobs, nil
		}
		q.Set("cursor", out.NextCursor)
	}
}

// resolveJob turns a job id or app/name into an id.
func resolveJob(ctx context.Context, cl *Client, ref string) (int64, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		return id, nil
	}
	if !strings.Contains(ref, "/") {
		return 0, usagef("job %q: give a job id or app/name", ref)
	}
	app, name, _ := strings.Cut(ref, "/")
	// The jobs of the app whose name starts with name: an index range.
	_, jobs, err := listJobs(ctx, cl, url.Values{"app": {app}, "q": {name}})
	if err != nil {
		return 0, err
	}
	for _, j := range jobs {
		if j.Key() == ref {
			return j.ID, nil
		}
	}
	return 0, &APIError{Method: http.MethodGet, Path: "/api/v1/jobs", Status: http.StatusNotFound, Msg: "job " + ref + " does not exist"}
}

func oneArg(fs *flag.FlagSet, args []string, what string) (string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		return "", usagef("%s: expected one %s, got %d arguments", fs.Name(), what, len(pos))
	}
	return pos[0], nil
}

func cmdSwitch(ctx context.Context, cmd string, args []string, env Env, c conn) error {
	fs := newFlagSet(cmd, env, &c)
	var until string
	if cmd == "pause" {
		fs.StringVar(&until, "until", "", "pause until this RFC 3339 instant (the job resumes by itself then)")
	}
	ref, err := oneArg(fs, args, "JOB (id or app/name)")
	if err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	id, err := resolveJob(ctx, cl, ref)
	if err != nil {
		return err
	}
	var body any
	if until != "" {
		body = map[string]string{"until": until} // the admin checks it (a 400 naming until)
	}
	var j apitypes.Job
	if err := cl.Do(ctx, http.MethodPost, "/api/v1/jobs/"+strconv.FormatInt(id, 10)+"/"+cmd, body, &j); err != nil {
		return err
	}
	state := "paused"
	if j.PausedUntil != nil {
		state = "paused until " + j.PausedUntil.UTC().Format(time.RFC3339)
	}
	if !j.Paused {
		state = "resumed"
	}
	fmt.Fprintf(env.Stdout, "job %s (id %d) %s\n", j.Key(), j.ID, state)
	return nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func cmdTrigger(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("trigger", env, &c)
	var kvs multiFlag
	fs.Var(&kvs, "param", "key=value overriding one parameter of this run (repeatable)")
	whole := fs.String("params", "", "replace the job's params for this run (a workflow: a JSON object laid over every node's)")
	date := fs.String("business-date", "", "workflow: the run's business date, YYYY-MM-DD (default today in the workflow's zone)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	kind := "job"
	var ref string
	switch {
	case len(pos) == 1:
		ref = pos[0]
	case len(pos) == 2 && (pos[0] == "job" || pos[0] == "workflow"):
		kind, ref = pos[0], pos[1]
	default:
		return usagef("trigger: want JOB, 'job JOB' or 'workflow WORKFLOW' (an id or app/name), got %d arguments", len(pos))
	}
	wholeSet := false
	fs.Visit(func(f *flag.Flag) { wholeSet = wholeSet || f.Name == "params" })
	if *date != "" && kind != "workflow" {
		return usagef("trigger: --business-date is for a workflow (trigger workflow WORKFLOW --business-date D)")
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	if kind == "workflow" {
		return triggerWorkflow(ctx, cl, env, ref, *date, *whole, kvs)
	}
	id, err := resolveJob(ctx, cl, ref)
	if err != nil {
		return notAJob(ctx, cl, ref, err)
	}
	path := "/api/v1/jobs/" + strconv.FormatInt(id, 10)
	body := map[string]any{}
	if wholeSet || len(kvs) > 0 {
		params := *whole
		if !wholeSet {
			var j apitypes.Job
			if err := cl.Do(ctx, http.MethodGet, path, nil, &j); err != nil {
				return err
			}
			params = j.Params
		}
		if params, err = MergeParams(params, kvs); err != nil {
			return usagef("%v", err)
		}
		body["params"] = params
	}
	var out struct {
		Run apitypes.Run `json:"run"`
	}
	if err := cl.Do(ctx, http.MethodPost, path+"/trigger", body, &out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "run %d of job %s %s (params %q)\n", out.Run.ID, ref, out.Run.Status, out.Run.Params)
	return nil
}

// notAJob is err, the failure to find job ref, saying how to trigger the
// workflow of that name when there is one.
func notAJob(ctx context.Context, cl *Client, ref string, err error) error {
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound {
		return err
	}
	if _, werr := resolveWorkflow(ctx, cl, ref); werr != nil {
		return err
	}
	e := *apiErr
	e.Msg = fmt.Sprintf("job %s does not exist, but a workflow of that name does: trigger it with 'shardjobctl trigger workflow %s'", ref, ref)
	return &e
}

// triggerWorkflow starts a run of workflow ref (trigger workflow WORKFLOW).
func triggerWorkflow(ctx context.Context, cl *Client, env Env, ref, date, whole string, kvs []string) error {
	id, err := resolveWorkflow(ctx, cl, ref)
	if err != nil {
		return err
	}
	params := whole
	if len(kvs) > 0 {
		if strings.TrimSpace(params) == "" {
			params = "{}" // a workflow run's params are a JSON object
		}
		if params, err = MergeParams(params, kvs); err != nil {
			return usagef("%v", err)
		}
	}
	var out struct {
		Run apitypes.WorkflowRun `json:"run"`
	}
	body := apitypes.WorkflowTrigger{BusinessDate: date, Params: params}
	if err := cl.Do(ctx, http.MethodPost, "/api/v1/workflows/"+strconv.FormatInt(id, 10)+"/trigger", body, &out); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "workflow run %d of workflow %s %s (business date %s)\n", out.Run.ID, ref, out.Run.Status, out.Run.BusinessDate)
	return nil
}

func outputFlag(fs *flag.FlagSet) *string {
	return fs.String("o", "table", "output: table or json")
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usagef("-o %q: use table or json", o)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func cmdGet(ctx context.Context, args []string, env Env, c conn) error {
	fs := newFlagSet("get", env, &c)
	o := outputFlag(fs)
	job := fs.String("job", "", "runs, dead: only the runs or dead letters of this job (id or app/name)")
	class := fs.String("class", "", "dead: only dead letters of this error class (permanent, retryable, timeout, lost, cancelled)")
	status := fs.String("status", "", "runs: only runs in this status")
	limit := fs.Int("limit", 20, "runs, dead: at most this many, newest first (1-1000)")
	app := fs.String("app", "", "only the jobs, runs or dead letters of this app")
	handler := fs.String("handler", "", "jobs, dead: only the jobs or dead letters of this handler")
	jobState := fs.String("state", "", "jobs: only jobs in this state (scheduled, paused, disabled, completed)")
	schedule := fs.String("schedule", "", "jobs: only jobs of this schedule kind (cron, every, at)")
	search := fs.String("search", "", "jobs: only jobs whose name starts with this")
	contains := fs.Bool("contains", false, "jobs: --search matches anywhere in the name (examines the jobs in bounded steps)")
	sortBy := fs.String("sort", "", "jobs: name (default), next_fire or id")
	trigger := fs.String("trigger", "", "runs: only runs of this trigger kind (cron, manual, retry, catch_up, child, api, backfill, workflow)")
	from := fs.String("from", "", "runs: only runs scheduled at or after this RFC 3339 instant (dead: died at or after)")
	to := fs.String("to", "", "runs: only runs scheduled before this RFC 3339 instant (dead: died before)")
	what, err := oneArg(fs, args, "kind (jobs, runs, executors, apps, calendars, workflows or dead)")
	if err != nil {
		return err
	}
	if err := checkOutput(*o); err != nil {
		return err
	}
	cl, err := c.client(env)
	if err != nil {
		return err
	}
	switch what {
	case "jobs", "job":
		filter := url.Values{}
		for k, v := range map[string]string{"app": *app, "handler": *handler, "state": *jobState, "schedule": *schedule, "q": *search, "sort": *sortBy} {
			if v != "" {
				filter.Set(k, v)
			}
		}
		if *contains {
			filter.Set("match", "contains")
		}
		if *sortBy == "" {
			filter.Set("sort", "id") // the order of the first versions
		}
		raws, jobs, err := listJobs(ctx, cl, filter)
		if err != nil {
			return err
		}
		if *o == "json" {
			return printJSON(env.Stdout, nonNil(raws))
		}
		var rows [][]string
		for _, j := range jobs {
			zone := j.TimeZone
			if len(j.TimeZones) > 0 { // several zones: all of them
				zone = strings.Join(j.TimeZones, ",")
			}
			rows = append(rows, []string{strconv.FormatInt(j.ID, 10), j.App, j.Name, j.Handler, j.Cron, zone,
				strconv.Itoa(j.SlotCount), state(j), timeCell(j.NextFireAt)})
		}
		return table(env.Stdout, []string{"ID", "APP", "NAME", "HANDLER", "CRON", "ZONE", "SLOTS", "STATE", "NEXT FIRE (UTC)"}, rows)
	case "runs", "run":
		q, err := listQuery(ctx, cl, *job, *limit, map[string]string{"status": *status, "app": *app, "trigger": *trigger, "from": *from, "to": *to})
		if err != nil {
			return err
		}
		var out struct {
			Runs []json.RawMessage `json:"runs"`
		}
		if err := cl.Do(ctx, http.MethodGet, "/api/v1/runs?"+q.Encode(), nil, &out); err != nil {
			return err
		}
		if *o == "json" {
			return printJSON(env.Stdout, nonNil(out.Runs))
		}
		var rows [][]string
		for _, raw := range out.Runs {
			var r apitypes.Run
			if err := json.Unmarshal(raw, &r); err != nil {
				return fmt.Errorf("decode run: %w", err)
			}
			rows = append(rows, runCells(r))
		}
		return table(env.Stdout, runHeader, rows)
	case "executors", "executor":
		var out struct {
			Executors []json.RawMessage `json:"executors"`
		}
		if err := cl.Do(ctx, http.MethodGet, "/api/v1/executors", nil, &out); err != nil {
			return err
		}
		if *o == "json" {
			return printJSON(env.Stdout, nonNil(out.Executors))
		}
		var rows [][]string
		for _, raw := range out.Executors {
			var e struct {
				ID            int64     `json:"id"`
				App           string    `json:"app"`
				InstanceID    string    `json:"instance_id"`
				Address       string    `json:"address"`
				State         string    `json:"state"`
				Capacity      int       `json:"capacity"`
				LastHeartbeat time.Time `json:"last_heartbeat"`
			}
			if err := json.Unmarshal(raw, &e); err != nil {
				return fmt.Errorf("decode executor: %w", err)
			}
			rows = append(rows, []string{strconv.FormatInt(e.ID, 10), e.App, e.InstanceID, e.Address, e.State,
				strconv.Itoa(e.Capacity), timeCell(&e.LastHeartbeat)})
		}
		return table(env.Stdout, []string{"ID", "APP", "INSTANCE", "ADDRESS", "STATE", "CAPACITY", "LAST HEARTBEAT (UTC)"}, rows)
	case "dead":
		q, err := listQuery(ctx, cl, *job, *limit, map[string]string{"app": *app, "handler": *handler, "class": *class, "from": *from, "to": *to})
		if err != nil {
			return err
		}
		return getDead(ctx, cl, env.Stdout, q, *o == "json")
	case "workflows", "workflow":
		return getWorkflows(ctx, cl, env.Stdout, *o == "json")
	case "apps", "app":
		return getApps(ctx, cl, env.Stdout, *o == "json")
	case "calendars", "calendar":
		cals, err := listCalendars(ctx, cl)
		if err != nil {
			return err
		}
		if *o == "json" {
			if cals == nil {
				cals = []apitypes.Calendar{}
			}
			return printJSON(env.Stdout, cals)
		}
		var rows [][]string
		for _, cal := range cals {
			rows = append(rows, []string{strconv.FormatInt(cal.ID, 10), cal.App, cal.Name, cal.Week, strconv.Itoa(cal.Holidays),
				strconv.Itoa(cal.Workdays), cal.Version, strconv.FormatInt(cal.Revision, 10), timeCell(&cal.UpdatedAt)})
		}
		return table(env.Stdout, []string{"ID", "APP", "NAME", "WEEK", "HOLIDAYS", "WORKDAYS", "VERSION", "REVISION", "UPDATED (UTC)"}, rows)
	}
	return usagef("get %q: use jobs, runs, executors, apps, calendars, workflows or dead", what)
}

// listQuery is the query of a list of runs or dead letters: limit, the
// job (an id or app/name, resolved; "" none) and the filters that are set.
func listQuery(ctx context.Context, cl *Client, job string, limit int, filters map[string]string) (url.Values, error) {
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if job != "" {
		id, err := resolveJob(ctx, cl, job)
		if err != nil {
			return nil, err
		}
		q.Set("job_id", strconv.FormatInt(id, 10))
	}
	for k, v := range filters {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q, nil
}

func nonNil(v []json.RawMessage) []json.RawMessage {
	if v == nil {
		return []json.RawMessage{}
	}
	return v
}

// state is the job's state as the API says it (Job.State: scheduled,
// paused, disabled, completed; docs/architecture.md, "Names"), or the same
// words worked out from an older admin's answer without it.
func state(j apitypes.Job) string {
	switch {
	case j.State != "":
		return j.State
	case j.Enabled != nil && !*j.Enabled:
		return apitypes.JobDisabled
	case j.Paused:
		return apitypes.JobPaused
	}
	return apitypes.JobScheduled
}

func timeCell(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

var runHeader = []string{"ID", "JOB", "STATUS", "TRIGGER", "SCHEDULED (UTC)", "SLOTS OK/FAILED/ALL", "DURATION"}

func runCells(r apitypes.Run) []string {
	dur := "-"
	if r.ActualMS != nil {
		dur = (time.Duration(*r.ActualMS) * time.Millisecond).String()
	}
	return []string{strconv.FormatInt(r.ID, 10), r.App + "/" + r.JobName, r.Status, r.Trigger, timeCell(&r.ScheduledAt),
		fmt.Sprintf("%d/%d/%d", r.SlotsSucceeded, r.SlotsFailed, r.SlotCount), dur}
}

// cmdLogs is in logs.go.

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// getApps prints the apps the user may see: their job and executor counts,
// owners and description (GET /api/v1/apps).
func getApps(ctx context.Context, cl *Client, w io.Writer, asJSON bool) error {
	var out struct {
		Apps []apitypes.AppView `json:"apps"`
	}
	if err := cl.Do(ctx, http.MethodGet, "/api/v1/apps", nil, &out); err != nil {
		return err
	}
	if asJSON {
		if out.Apps == nil {
			out.Apps = []apitypes.AppView{}
		}
		return printJSON(w, out.Apps)
	}
	var rows [][]string
	for _, a := range out.Apps {
		owners, desc := strings.Join(a.Owners, ","), strings.Join(strings.Fields(a.Description), " ")
		if r := []rune(desc); len(r) > 60 {
			desc = string(r[:59]) + "…"
		}
		if owners == "" {
			owners = "-"
		}
		if desc == "" {
			desc = "-"
		}
		rows = append(rows, []string{a.Name, strconv.Itoa(a.Jobs), strconv.Itoa(a.ExecutorsOnline) + "/" + strconv.Itoa(a.Executors), owners, desc})
	}
	return table(w, []string{"NAME", "JOBS", "EXECUTORS ONLINE/ALL", "OWNERS", "DESCRIPTION"}, rows)
}

package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// The deployment files, relative to this directory.
const (
	composeFile  = "compose/docker-compose.yml"
	composeEnv   = "compose/.env.example"
	k8sDir       = "k8s"
	systemdDir   = "systemd"
	dockerDir    = "docker"
	repoRoot     = ".."
	adminDocker  = "deploy/docker/Dockerfile.admin"
	execDocker   = "deploy/docker/Dockerfile.executor"
	minSecretLen = 16 // protocol.MinSecretLen: a placeholder must be shorter, so it is refused
)

// A target is one command whose flags the deployment files use.
type target string

const (
	adminServe   target = "shardjob-admin serve"
	adminMigrate target = "shardjob-admin migrate"
	executorCmd  target = "shardjob-executor"
)

// usage is one flag, environment variable or config-file key used by a
// deployment file, to be checked against the binaries.
type usage struct {
	target target
	kind   string // "flag", "env" or "conf"
	name   string // flag name without dashes, SHARDJOB_* name, or config key
	where  string
}

var (
	flagRE    = regexp.MustCompile(`^--?([a-z][a-z0-9-]*)(?:=(.*))?$`)
	envRefRE  = regexp.MustCompile(`^\$\{[A-Z][A-Z0-9_]*:\?[^}]+\}$`)
	envVarsRE = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)(:?[?-])?([^}]*)\}`)
	secretRE  = regexp.MustCompile(`(?i)secret|password`)
)

// ---------------------------------------------------------------- helpers

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return b
}

// yamlDocs parses every document of a (multi-document) YAML file.
func yamlDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, path)))
	var docs []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("%s: invalid YAML: %v", path, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// get walks maps by key; nil when a key is missing or not a map.
func get(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func strs(v any) []string {
	var out []string
	for _, e := range list(v) {
		out = append(out, str(e))
	}
	return out
}

func toInt(t *testing.T, v any, what string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(str(v), 10, 64)
	if err != nil {
		t.Fatalf("%s: %q is not an integer", what, str(v))
	}
	return n
}

// flagsOf extracts --name[=value] flags from an argument list; a flag
// without "=" takes the next argument as its value when that is not a flag.
func flagsOf(args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		m := flagRE.FindStringSubmatch(args[i])
		if m == nil {
			continue
		}
		val := m[2]
		if !strings.Contains(args[i], "=") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			val = args[i+1]
			i++
		}
		out[m[1]] = val
	}
	return out
}

// drainBudget is the longest a draining executor may take: running slots
// get the drain timeout, undelivered results up to the drain timeout more.
func drainBudget(t *testing.T, args []string, where string) time.Duration {
	t.Helper()
	v, ok := flagsOf(args)["drain-timeout"]
	if !ok {
		t.Fatalf("%s: the executor's arguments do not set --drain-timeout explicitly; the stop grace period is computed from it", where)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: --drain-timeout %q: %v", where, v, err)
	}
	return 2 * d
}

// confKeys reads a "name = value" config file of the executor.
func confKeys(t *testing.T, text, where string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s line %d: want name = value, got %q", where, n+1, line)
			continue
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// envFileKeys reads KEY=value lines (systemd EnvironmentFile, .env).
func envFileKeys(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, path)))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s line %d: want KEY=value", path, n)
			continue
		}
		out[k] = v
	}
	return out
}

// checkPlaceholder fails when a secret value in a template could be used
// as is: it must say CHANGE_ME (or be empty), and be too short to be
// accepted as an executor secret.
func checkPlaceholder(t *testing.T, where, key, val string) {
	t.Helper()
	if val == "" {
		return
	}
	if !strings.Contains(val, "CHANGE_ME") {
		t.Errorf("%s: %s = %q: a template must hold the placeholder CHANGE_ME, never a usable secret", where, key, val)
	}
	if strings.Contains(strings.ToLower(key), "secret") && len(val) >= minSecretLen {
		t.Errorf("%s: %s placeholder %q is %d characters: keep it under %d so that a forgotten placeholder is refused at start", where, key, val, len(val), minSecretLen)
	}
}

// ---------------------------------------------------------------- compose

type composeService struct {
	name string
	def  map[string]any
}

func (s composeService) dockerfile() string { return str(get(s.def, "build", "dockerfile")) }

func (s composeService) env() map[string]string {
	out := map[string]string{}
	switch e := get(s.def, "environment").(type) {
	case map[string]any:
		for k, v := range e {
			out[k] = str(v)
		}
	case []any:
		for _, kv := range e {
			k, v, _ := strings.Cut(str(kv), "=")
			out[k] = v
		}
	}
	return out
}

func loadCompose(t *testing.T) (map[string]any, []composeService) {
	t.Helper()
	docs := yamlDocs(t, composeFile)
	if len(docs) != 1 {
		t.Fatalf("%s: want one YAML document, got %d", composeFile, len(docs))
	}
	svcs, ok := get(docs[0], "services").(map[string]any)
	if !ok || len(svcs) == 0 {
		t.Fatalf("%s: no services", composeFile)
	}
	var out []composeService
	for name, def := range svcs {
		m, ok := def.(map[string]any)
		if !ok {
			t.Fatalf("%s: service %s is not a mapping", composeFile, name)
		}
		out = append(out, composeService{name, m})
	}
	slices.SortFunc(out, func(a, b composeService) int { return strings.Compare(a.name, b.name) })
	return docs[0], out
}

// TestComposePostgres: the override docker-compose.postgres.yml points the
// migration and both admins of docker-compose.yml at its PostgreSQL
// service, by a URL with the password from .env, once it is healthy.
func TestComposePostgres(t *testing.T) {
	const file = "compose/docker-compose.postgres.yml"
	docs := yamlDocs(t, file)
	if len(docs) != 1 {
		t.Fatalf("%s: want one YAML document, got %d", file, len(docs))
	}
	svcs, _ := get(docs[0], "services").(map[string]any)
	_, base := loadCompose(t)
	names := map[string]bool{}
	for _, s := range base {
		names[s.name] = true
	}
	pg, _ := svcs["postgres"].(map[string]any)
	if !strings.HasPrefix(str(get(pg, "image")), "postgres:") || get(pg, "healthcheck") == nil {
		t.Errorf("%s: service postgres needs a postgres image and a healthcheck: %v", file, pg)
	}
	for _, name := range []string{"migrate", "admin1", "admin2"} {
		if !names[name] {
			t.Errorf("%s overrides %s, which docker-compose.yml does not have", file, name)
		}
		def, _ := svcs[name].(map[string]any)
		env := composeService{name, def}.env()
		if env["SHARDJOB_DB_DRIVER"] != "postgres" ||
			!strings.HasPrefix(env["SHARDJOB_DB_DSN"], "postgres://shardjob:${POSTGRES_PASSWORD:?") ||
			!strings.Contains(env["SHARDJOB_DB_DSN"], "@postgres:5432/shardjob") {
			t.Errorf("%s: %s must use the postgres service with the password from .env: %v", file, name, env)
		}
		if str(get(def, "depends_on", "postgres", "condition")) != "service_healthy" {
			t.Errorf("%s: %s must wait until postgres is healthy", file, name)
		}
	}
}

func TestCompose(t *testing.T) {
	_, svcs := loadCompose(t)
	var mysql, zks, admins, executors []composeService
	byName := map[string]composeService{}
	for _, s := range svcs {
		byName[s.name] = s
		image := str(get(s.def, "image"))
		cmd := strs(get(s.def, "command"))
		switch {
		case strings.HasPrefix(image, "mysql:") || strings.HasPrefix(image, "mariadb:"):
			mysql = append(mysql, s)
		case strings.HasPrefix(image, "zookeeper:"):
			zks = append(zks, s)
		case s.dockerfile() == adminDocker && len(cmd) > 0 && cmd[0] == "serve":
			admins = append(admins, s)
		case s.dockerfile() == adminDocker && len(cmd) > 0 && cmd[0] == "migrate":
			// the one-shot schema migration: known, nothing more to check here
		case s.dockerfile() == execDocker:
			executors = append(executors, s)
		default:
			t.Errorf("service %s (image %q, command %q) is neither MySQL, ZooKeeper, an admin nor an executor", s.name, image, cmd)
		}
	}
	for _, c := range []struct {
		what string
		got  []composeService
		want int
	}{{"MySQL/MariaDB", mysql, 1}, {"ZooKeeper", zks, 3}, {"admin (serve)", admins, 2}, {"executor", executors, 3}} {
		if len(c.got) != c.want {
			t.Errorf("want %d %s services, got %d", c.want, c.what, len(c.got))
		}
	}

	t.Run("builds and images exist", func(t *testing.T) {
		for _, s := range svcs {
			image := str(get(s.def, "image"))
			build := get(s.def, "build")
			if build == nil {
				if strings.HasPrefix(image, "shardjob") {
					t.Errorf("service %s: image %s is ours but has no build section: nothing would build it", s.name, image)
				}
				if image == "" {
					t.Errorf("service %s has neither image nor build", s.name)
				}
				continue
			}
			ctx := filepath.Join(filepath.Dir(composeFile), str(get(build, "context")))
			if st, err := os.Stat(ctx); err != nil || !st.IsDir() {
				t.Errorf("service %s: build context %s does not exist", s.name, ctx)
			}
			if df := filepath.Join(ctx, s.dockerfile()); !fileExists(df) {
				t.Errorf("service %s: Dockerfile %s does not exist", s.name, df)
			}
			for _, v := range strs(get(s.def, "volumes")) {
				if src, _, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(src, ".") {
					if !fileExists(filepath.Join(filepath.Dir(composeFile), src)) {
						t.Errorf("service %s: bind mount source %s does not exist", s.name, src)
					}
				}
			}
		}
	})

	t.Run("no literal secrets", func(t *testing.T) {
		for _, s := range svcs {
			for k, v := range s.env() {
				if secretRE.MatchString(k) && !envRefRE.MatchString(v) {
					t.Errorf("service %s: %s must be a required reference ${VAR:?message} to the .env file, not a literal", s.name, k)
				}
				if strings.Contains(k, "DSN") {
					user, rest, ok := strings.Cut(v, ":")
					pw, _, _ := strings.Cut(rest, "@tcp(")
					if !ok || user == "" || !envRefRE.MatchString(pw) {
						t.Errorf("service %s: the password in %s must be a required reference ${VAR:?message}, got %q", s.name, k, v)
					}
				}
			}
			for _, a := range strs(get(s.def, "command")) {
				if m := flagRE.FindStringSubmatch(a); m != nil && secretRE.MatchString(m[1]) {
					t.Errorf("service %s: secret flag %s on the command line (visible in ps): use the environment", s.name, a)
				}
			}
		}
	})

	t.Run(".env.example covers every required variable, without values", func(t *testing.T) {
		example := envFileKeys(t, composeEnv)
		for _, m := range envVarsRE.FindAllStringSubmatch(string(readFile(t, composeFile)), -1) {
			name, op := m[1], m[2]
			if op != ":?" {
				continue // optional, with a default
			}
			v, ok := example[name]
			if !ok {
				t.Errorf("%s: required variable %s is missing", composeEnv, name)
			} else if v != "" {
				t.Errorf("%s: %s has a value; ship it empty so that every user makes their own", composeEnv, name)
			}
		}
		if fileExists("compose/.env") {
			t.Log("note: compose/.env exists locally; make sure it is never committed")
		}
	})

	t.Run("zookeeper ensemble", func(t *testing.T) {
		ids := map[string]bool{}
		for _, z := range zks {
			env := z.env()
			ids[env["ZOO_MY_ID"]] = true
			for _, other := range zks {
				if !strings.Contains(env["ZOO_SERVERS"], "="+other.name+":2888:3888") {
					t.Errorf("%s: ZOO_SERVERS %q does not list %s", z.name, env["ZOO_SERVERS"], other.name)
				}
			}
			if get(z.def, "healthcheck") == nil {
				t.Errorf("%s: no healthcheck (the admins wait for it)", z.name)
			}
		}
		if len(ids) != len(zks) {
			t.Errorf("ZOO_MY_ID values are not distinct: %v", ids)
		}
	})

	t.Run("admins", func(t *testing.T) {
		seen := map[string]bool{}
		for _, a := range admins {
			env := a.env()
			for _, z := range zks {
				if !strings.Contains(env["SHARDJOB_ZK"], z.name+":2181") {
					t.Errorf("%s: SHARDJOB_ZK %q does not name %s", a.name, env["SHARDJOB_ZK"], z.name)
				}
			}
			if want := "http://" + a.name + ":8080"; env["SHARDJOB_ADVERTISE_URL"] != want {
				t.Errorf("%s: SHARDJOB_ADVERTISE_URL = %q, want %q", a.name, env["SHARDJOB_ADVERTISE_URL"], want)
			}
			if id := env["SHARDJOB_ID"]; id == "" || seen[id] {
				t.Errorf("%s: SHARDJOB_ID %q is empty or not unique", a.name, id)
			} else {
				seen[id] = true
			}
			if env["SHARDJOB_DB_DRIVER"] != "mysql" {
				t.Errorf("%s: SHARDJOB_DB_DRIVER = %q, want mysql", a.name, env["SHARDJOB_DB_DRIVER"])
			}
			for _, dep := range []string{"mysql", zks[0].name} {
				if get(a.def, "depends_on", dep) == nil {
					t.Errorf("%s: does not depend on %s", a.name, dep)
				}
			}
		}
	})

	t.Run("executors", func(t *testing.T) {
		for _, e := range executors {
			env := e.env()
			for _, a := range admins {
				if !strings.Contains(env["SHARDJOB_ADMINS"], "http://"+a.name+":8080") {
					t.Errorf("%s: SHARDJOB_ADMINS %q does not list %s", e.name, env["SHARDJOB_ADMINS"], a.name)
				}
			}
			if want := "http://" + e.name + ":9090"; env["SHARDJOB_ADVERTISE_URL"] != want {
				t.Errorf("%s: SHARDJOB_ADVERTISE_URL = %q, want %q", e.name, env["SHARDJOB_ADVERTISE_URL"], want)
			}
			budget := drainBudget(t, strs(get(e.def, "command")), e.name)
			grace, err := time.ParseDuration(str(get(e.def, "stop_grace_period")))
			if err != nil || grace <= budget {
				t.Errorf("%s: stop_grace_period %q must exceed twice --drain-timeout (%s), or the drain is cut short by SIGKILL", e.name, str(get(e.def, "stop_grace_period")), budget)
			}
			if sig := str(get(e.def, "stop_signal")); sig != "" && sig != "SIGTERM" {
				t.Errorf("%s: stop_signal %s: the executor drains on SIGTERM", e.name, sig)
			}
		}
	})
}

// TestComposeConfig asks Docker Compose itself to validate the file, when
// the compose plugin is installed. It pulls nothing and starts nothing.
func TestComposeConfig(t *testing.T) {
	if err := exec.Command("docker", "compose", "version").Run(); err != nil {
		t.Skip("docker compose plugin not available:", err)
	}
	dir := t.TempDir()
	full := filepath.Join(dir, "full.env")
	empty := filepath.Join(dir, "empty.env")
	vals := "MYSQL_ROOT_PASSWORD=test-root-pw\nMYSQL_PASSWORD=testpw\nSHARDJOB_EXECUTOR_SECRET=0123456789abcdef0123\n"
	if err := os.WriteFile(full, []byte(vals), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "MYSQL_ROOT_PASSWORD" && k != "MYSQL_PASSWORD" && k != "SHARDJOB_EXECUTOR_SECRET" {
			env = append(env, kv)
		}
	}
	compose := func(envFile string) (string, error) {
		cmd := exec.Command("docker", "compose", "--env-file", envFile, "-f", composeFile, "config", "-q")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := compose(full); err != nil {
		t.Errorf("docker compose config with every variable set: %v\n%s", err, out)
	}
	out, err := compose(empty)
	if err == nil {
		t.Errorf("docker compose config accepted a missing secret; want a clear failure")
	} else if !strings.Contains(out, "set ") || !strings.Contains(out, ".env") {
		t.Errorf("docker compose config without secrets failed without naming the variable and the .env file:\n%s", out)
	}
}

// ---------------------------------------------------------------- kubernetes

type k8sObject struct {
	file string
	doc  map[string]any
}

func (o k8sObject) kind() string { return str(get(o.doc, "kind")) }
func (o k8sObject) name() string { return str(get(o.doc, "metadata", "name")) }
func (o k8sObject) String() string {
	return fmt.Sprintf("%s %s/%s", o.file, o.kind(), o.name())
}

func loadK8s(t *testing.T) []k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s", k8sDir)
	}
	var objs []k8sObject
	for _, f := range files {
		docs := yamlDocs(t, f)
		if len(docs) == 0 {
			t.Errorf("%s: no YAML document", f)
		}
		for _, d := range docs {
			o := k8sObject{filepath.Base(f), d}
			if str(get(d, "apiVersion")) == "" || o.kind() == "" {
				t.Errorf("%s: a document without apiVersion or kind", f)
			}
			if o.kind() != "Kustomization" && o.name() == "" {
				t.Errorf("%s: %s without metadata.name", f, o.kind())
			}
			objs = append(objs, o)
		}
	}
	return objs
}

func find(objs []k8sObject, kind, name string) (k8sObject, bool) {
	for _, o := range objs {
		if o.kind() == kind && o.name() == name {
			return o, true
		}
	}
	return k8sObject{}, false
}

// podSpec returns the pod spec of a Deployment or a Job.
func podSpec(o k8sObject) map[string]any {
	m, _ := get(o.doc, "spec", "template", "spec").(map[string]any)
	return m
}

func containers(o k8sObject) []map[string]any {
	var out []map[string]any
	for _, c := range list(get(podSpec(o), "containers")) {
		if m, ok := c.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// selects reports whether every label of selector is on labels.
func selects(selector, labels any) bool {
	sel, _ := selector.(map[string]any)
	lab, _ := labels.(map[string]any)
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if str(lab[k]) != str(v) {
			return false
		}
	}
	return true
}

// k8sTarget says which command a workload runs, from its image name.
func k8sTarget(c map[string]any) target {
	image := str(c["image"])
	args := strs(c["args"])
	switch {
	case strings.HasPrefix(image, "shardjob-executor"):
		return executorCmd
	case strings.HasPrefix(image, "shardjob-admin") && len(args) > 0 && args[0] == "migrate":
		return adminMigrate
	case strings.HasPrefix(image, "shardjob-admin"):
		return adminServe
	}
	return ""
}

func TestKubernetes(t *testing.T) {
	objs := loadK8s(t)

	admin, ok := find(objs, "Deployment", "shardjob-admin")
	if !ok {
		t.Fatal("no Deployment shardjob-admin")
	}
	executor, ok := find(objs, "Deployment", "shardjob-executor")
	if !ok {
		t.Fatal("no Deployment shardjob-executor")
	}
	adminLabels := get(admin.doc, "spec", "template", "metadata", "labels")

	t.Run("admin deployment", func(t *testing.T) {
		if n := toInt(t, get(admin.doc, "spec", "replicas"), "admin replicas"); n != 2 {
			t.Errorf("admin replicas = %d, want 2", n)
		}
		if !selects(get(admin.doc, "spec", "selector", "matchLabels"), adminLabels) {
			t.Error("admin Deployment's selector does not match its pod labels")
		}
		cs := containers(admin)
		if len(cs) != 1 {
			t.Fatalf("admin pod: want 1 container, got %d", len(cs))
		}
		c := cs[0]
		if p := str(get(c, "readinessProbe", "httpGet", "path")); p != "/readyz" {
			t.Errorf("admin readinessProbe path = %q, want /readyz", p)
		}
		if p := str(get(c, "livenessProbe", "httpGet", "path")); p != "/healthz" {
			t.Errorf("admin livenessProbe path = %q, want /healthz", p)
		}
		checkProbePorts(t, "admin", c)
		args := strs(c["args"])
		if len(args) == 0 || args[0] != "serve" {
			t.Errorf("admin args %q: want the serve command first", args)
		}
	})

	t.Run("admin service and disruption budget", func(t *testing.T) {
		svc, ok := find(objs, "Service", "shardjob-admin")
		if !ok {
			t.Fatal("no Service shardjob-admin")
		}
		if !selects(get(svc.doc, "spec", "selector"), adminLabels) {
			t.Error("Service shardjob-admin does not select the admin pods")
		}
		var pdbs []k8sObject
		for _, o := range objs {
			if o.kind() == "PodDisruptionBudget" {
				pdbs = append(pdbs, o)
			}
		}
		if len(pdbs) != 1 {
			t.Fatalf("want 1 PodDisruptionBudget, got %d", len(pdbs))
		}
		pdb := pdbs[0]
		if !selects(get(pdb.doc, "spec", "selector", "matchLabels"), adminLabels) {
			t.Errorf("%s does not select the admin pods (labels %v)", pdb, adminLabels)
		}
		if selects(get(pdb.doc, "spec", "selector", "matchLabels"), get(executor.doc, "spec", "template", "metadata", "labels")) {
			t.Errorf("%s selects the executor pods too", pdb)
		}
		replicas := toInt(t, get(admin.doc, "spec", "replicas"), "admin replicas")
		if v := get(pdb.doc, "spec", "minAvailable"); v != nil {
			if n := toInt(t, v, "minAvailable"); n < 1 || n >= replicas {
				t.Errorf("%s minAvailable %d: want at least 1 and fewer than the %d replicas (or no node could ever be drained)", pdb, n, replicas)
			}
		} else if get(pdb.doc, "spec", "maxUnavailable") == nil {
			t.Errorf("%s sets neither minAvailable nor maxUnavailable", pdb)
		}
	})

	t.Run("executor deployment drains", func(t *testing.T) {
		cs := containers(executor)
		if len(cs) != 1 {
			t.Fatalf("executor pod: want 1 container, got %d", len(cs))
		}
		c := cs[0]
		if get(c, "lifecycle", "preStop") == nil {
			t.Error("executor container has no lifecycle.preStop")
		}
		budget := drainBudget(t, strs(c["args"]), executor.String())
		grace := time.Duration(toInt(t, get(podSpec(executor), "terminationGracePeriodSeconds"), "terminationGracePeriodSeconds")) * time.Second
		if grace <= budget {
			t.Errorf("executor terminationGracePeriodSeconds %s must exceed twice --drain-timeout (%s)", grace, budget)
		}
		if p := str(get(c, "readinessProbe", "httpGet", "path")); p != "/shardjob/v1/health" {
			t.Errorf("executor readinessProbe path = %q, want /shardjob/v1/health", p)
		}
		if get(c, "livenessProbe", "httpGet") != nil {
			t.Error("executor livenessProbe is an HTTP probe: the health endpoint answers 503 while draining, which would kill a draining pod; use tcpSocket")
		}
		checkProbePorts(t, "executor", c)
		flags := flagsOf(strs(c["args"]))
		if !strings.Contains(flags["advertise-url"], "$(POD_IP)") {
			t.Errorf("executor --advertise-url %q: want the pod IP, which the admins can reach", flags["advertise-url"])
		}
	})

	t.Run("no literal secrets", func(t *testing.T) {
		secretKeys := map[string]map[string]bool{} // secret name → keys
		for _, o := range objs {
			switch o.kind() {
			case "Secret":
				if !strings.HasSuffix(o.file, ".example.yaml") {
					t.Errorf("%s: a Secret outside a *.example.yaml template", o)
				}
				keys := map[string]bool{}
				for _, field := range []string{"stringData", "data"} {
					m, _ := get(o.doc, field).(map[string]any)
					for k, v := range m {
						keys[k] = true
						if field == "data" {
							t.Errorf("%s: data.%s holds a base64 value; templates use stringData placeholders", o, k)
						}
						checkPlaceholder(t, o.String(), k, str(v))
					}
				}
				secretKeys[o.name()] = keys
			case "ConfigMap":
				m, _ := get(o.doc, "data").(map[string]any)
				for k, v := range m {
					if secretRE.MatchString(k) || strings.Contains(k, "DSN") {
						t.Errorf("%s: %s belongs in a Secret, not a ConfigMap", o, k)
					}
					for _, line := range strings.Split(str(v), "\n") {
						if name, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && secretRE.MatchString(name) && !strings.HasPrefix(strings.TrimSpace(line), "#") {
							t.Errorf("%s: %s sets %s; keep secrets out of ConfigMaps", o, k, strings.TrimSpace(name))
						}
					}
				}
			}
		}
		for _, o := range objs {
			for _, c := range containers(o) {
				for _, e := range list(c["env"]) {
					name := str(get(e, "name"))
					ref := get(e, "valueFrom", "secretKeyRef")
					if secretRE.MatchString(name) || strings.Contains(name, "DSN") {
						if get(e, "value") != nil || ref == nil {
							t.Errorf("%s: env %s must come from a secretKeyRef, not a literal value", o, name)
						}
					}
					if ref != nil {
						sec, key := str(get(ref, "name")), str(get(ref, "key"))
						if !secretKeys[sec][key] {
							t.Errorf("%s: env %s refers to secret %s key %s, which the secret template does not define", o, name, sec, key)
						}
					}
				}
				for _, a := range strs(c["args"]) {
					if m := flagRE.FindStringSubmatch(a); m != nil && secretRE.MatchString(m[1]) {
						t.Errorf("%s: secret flag %s in args (visible in the pod spec and ps)", o, a)
					}
				}
			}
		}
	})

	t.Run("references resolve", func(t *testing.T) {
		for _, o := range objs {
			for _, c := range containers(o) {
				image := str(c["image"])
				name, _, _ := strings.Cut(image, ":")
				if df := filepath.Join(dockerDir, "Dockerfile."+strings.TrimPrefix(name, "shardjob-")); !strings.HasPrefix(name, "shardjob-") || !fileExists(df) {
					t.Errorf("%s: image %s is not built by a Dockerfile in %s", o, image, dockerDir)
				}
				for _, ef := range list(c["envFrom"]) {
					if cm := str(get(ef, "configMapRef", "name")); cm != "" {
						if _, ok := find(objs, "ConfigMap", cm); !ok {
							t.Errorf("%s: envFrom ConfigMap %s does not exist", o, cm)
						}
					}
				}
			}
			for _, v := range list(get(podSpec(o), "volumes")) {
				if cm := str(get(v, "configMap", "name")); cm != "" {
					if _, ok := find(objs, "ConfigMap", cm); !ok {
						t.Errorf("%s: volume ConfigMap %s does not exist", o, cm)
					}
				}
			}
			if o.kind() == "Kustomization" {
				for _, r := range strs(get(o.doc, "resources")) {
					if !fileExists(filepath.Join(k8sDir, r)) {
						t.Errorf("%s: resource %s does not exist", o.file, r)
					}
					if strings.Contains(r, "example") {
						t.Errorf("%s: lists the template %s", o.file, r)
					}
				}
			}
		}
		// The external services the configuration names exist.
		cm, ok := find(objs, "ConfigMap", "shardjob-admin")
		if !ok {
			t.Fatal("no ConfigMap shardjob-admin")
		}
		for _, hp := range strings.Split(str(get(cm.doc, "data", "SHARDJOB_ZK")), ",") {
			host, _, _ := strings.Cut(hp, ":")
			if svc, ok := find(objs, "Service", host); !ok || str(get(svc.doc, "spec", "type")) != "ExternalName" {
				t.Errorf("SHARDJOB_ZK names %s, which is not an ExternalName Service of the manifests", host)
			}
		}
		// The executor's config file points at the admin Service.
		ecm, ok := find(objs, "ConfigMap", "shardjob-executor")
		if !ok {
			t.Fatal("no ConfigMap shardjob-executor")
		}
		conf := confKeys(t, str(get(ecm.doc, "data", "executor.conf")), "executor.conf")
		if conf["admins"] != "http://shardjob-admin:8080" {
			t.Errorf("executor.conf admins = %q, want the admin Service http://shardjob-admin:8080", conf["admins"])
		}
	})
}

func checkProbePorts(t *testing.T, what string, c map[string]any) {
	t.Helper()
	ports := map[string]bool{}
	for _, p := range list(c["ports"]) {
		ports[str(get(p, "name"))] = true
		ports[str(get(p, "containerPort"))] = true
	}
	for _, probe := range []string{"readinessProbe", "livenessProbe", "startupProbe"} {
		for _, kind := range []string{"httpGet", "tcpSocket"} {
			if p := get(c, probe, kind, "port"); p != nil && !ports[str(p)] {
				t.Errorf("%s %s port %v is not a port of the container", what, probe, p)
			}
		}
	}
}

// ---------------------------------------------------------------- systemd

// unit is a parsed systemd unit file: section → key → values (repeatable).
type unit map[string]map[string][]string

func parseUnit(t *testing.T, path string) unit {
	t.Helper()
	u := unit{}
	section := ""
	for n, line := range strings.Split(string(readFile(t, path)), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s line %d: %q is not key=value inside a section", path, n+1, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func (u unit) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// parseSystemdSeconds reads a systemd time span such as "90s", "2min" or "90".
func parseSystemdSeconds(s string) (time.Duration, error) {
	if _, err := strconv.Atoi(s); err == nil {
		s += "s"
	}
	return time.ParseDuration(strings.ReplaceAll(s, "min", "m"))
}

func TestSystemd(t *testing.T) {
	units := map[string]target{"shardjob-admin.service": adminServe, "shardjob-executor.service": executorCmd}
	for file, tgt := range units {
		t.Run(file, func(t *testing.T) {
			path := filepath.Join(systemdDir, file)
			u := parseUnit(t, path)
			want := map[string]string{
				"Restart":         "on-failure",
				"KillSignal":      "SIGTERM",
				"NoNewPrivileges": "yes",
				"ProtectSystem":   "strict",
				"ProtectHome":     "yes",
				"PrivateTmp":      "yes",
			}
			for k, v := range want {
				if got := u.get("Service", k); got != v {
					t.Errorf("[Service] %s = %q, want %q", k, got, v)
				}
			}
			if u.get("Service", "EnvironmentFile") == "" {
				t.Error("[Service] has no EnvironmentFile")
			}
			if u.get("Service", "DynamicUser") != "yes" && u.get("Service", "User") == "" {
				t.Error("[Service] runs as root: set DynamicUser=yes or User=")
			}
			if u.get("Install", "WantedBy") == "" {
				t.Error("[Install] has no WantedBy")
			}
			args := strings.Fields(u.get("Service", "ExecStart"))
			if len(args) == 0 || filepath.Base(args[0]) != strings.Fields(string(tgt))[0] {
				t.Fatalf("ExecStart %q does not run %s", args, tgt)
			}
			for _, a := range args {
				if m := flagRE.FindStringSubmatch(a); m != nil && secretRE.MatchString(m[1]) && !strings.HasPrefix(m[2], "%d/") && m[1] != "secret-file" {
					t.Errorf("ExecStart passes a secret on the command line (%s)", a)
				}
			}
			stop, err := parseSystemdSeconds(u.get("Service", "TimeoutStopSec"))
			if err != nil {
				t.Fatalf("TimeoutStopSec %q: %v", u.get("Service", "TimeoutStopSec"), err)
			}
			if tgt == executorCmd {
				if budget := drainBudget(t, args, path); stop <= budget {
					t.Errorf("TimeoutStopSec %s must exceed twice --drain-timeout (%s)", stop, budget)
				}
			} else if stop <= 10*time.Second {
				t.Errorf("TimeoutStopSec %s: the admin takes up to 10 s to shut its HTTP server down", stop)
			}
		})
	}

	t.Run("env file templates hold placeholders only", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(systemdDir, "*.env.example"))
		if len(files) == 0 {
			t.Fatal("no *.env.example next to the units")
		}
		for _, f := range files {
			for k, v := range envFileKeys(t, f) {
				if secretRE.MatchString(k) {
					checkPlaceholder(t, f, k, v)
				}
				if strings.Contains(k, "DSN") && !strings.Contains(v, ":CHANGE_ME@") {
					t.Errorf("%s: %s must carry the password placeholder CHANGE_ME", f, k)
				}
			}
		}
	})

	t.Run("systemd-analyze verify", func(t *testing.T) {
		if _, err := exec.LookPath("systemd-analyze"); err != nil {
			t.Skip("systemd-analyze not installed")
		}
		truePath, err := exec.LookPath("true")
		if err != nil {
			t.Skip("no 'true' binary to stand in for the shardjob binaries")
		}
		dir := t.TempDir()
		var paths []string
		for file := range units {
			text := string(readFile(t, filepath.Join(systemdDir, file)))
			text = strings.ReplaceAll(text, "/usr/local/bin/shardjob-admin", truePath)
			text = strings.ReplaceAll(text, "/usr/local/bin/shardjob-executor", truePath)
			p := filepath.Join(dir, file)
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		out, err := exec.Command("systemd-analyze", append([]string{"verify"}, paths...)...).CombinedOutput()
		if err != nil || bytes.Contains(out, []byte("Unknown")) || bytes.Contains(out, []byte("Failed to parse")) {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
}

// ---------------------------------------------------------------- Dockerfiles

func TestDockerfiles(t *testing.T) {
	goMod := string(readFile(t, filepath.Join(repoRoot, "go.mod")))
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(goMod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	for _, c := range []struct{ file, pkg, port string }{
		{"Dockerfile.admin", "./admin/cmd/shardjob-admin", "8080"},
		{"Dockerfile.executor", "./executor/cmd/shardjob-executor", "9090"},
	} {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dockerDir, c.file)
			text := string(readFile(t, path))
			stages := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(text, -1)
			if len(stages) < 2 {
				t.Fatalf("not multi-stage: %d FROM lines", len(stages))
			}
			if final := stages[len(stages)-1][1]; strings.Contains(final, "golang") {
				t.Errorf("final stage %s carries the Go toolchain", final)
			}
			if m := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)`).FindStringSubmatch(text); m == nil || m[1] != goVersion[1] {
				t.Errorf("ARG GO_VERSION %v does not match go.mod's go %s", m, goVersion[1])
			}
			for _, want := range []string{"CGO_ENABLED=0", c.pkg, "HEALTHCHECK", "EXPOSE " + c.port} {
				if !strings.Contains(text, want) {
					t.Errorf("missing %q", want)
				}
			}
			users := regexp.MustCompile(`(?m)^USER\s+(\S+)`).FindAllStringSubmatch(text, -1)
			if len(users) == 0 {
				t.Error("no USER: the container would run as root")
			} else if u := users[len(users)-1][1]; u == "root" || u == "0" || strings.HasPrefix(u, "0:") {
				t.Errorf("USER %s is root", u)
			}
			if !regexp.MustCompile(`(?m)^ENTRYPOINT \[`).MatchString(text) {
				t.Error("ENTRYPOINT is not in exec form: SIGTERM would go to a shell, not to the process")
			}
			ignore := string(readFile(t, path+".dockerignore"))
			for _, m := range regexp.MustCompile(`(?m)^COPY (.+)$`).FindAllStringSubmatch(text, -1) {
				fields := strings.Fields(m[1])
				if strings.HasPrefix(fields[0], "--from") {
					continue
				}
				for _, src := range fields[:len(fields)-1] {
					if !fileExists(filepath.Join(repoRoot, src)) {
						t.Errorf("COPY %s: no such path in the repository", src)
					}
					if !strings.Contains(ignore, "!"+src) {
						t.Errorf("COPY %s, but %s.dockerignore does not let it through", src, c.file)
					}
				}
			}
		})
	}
}

// ---------------------------------------------------------------- flags

// usages collects every flag, SHARDJOB_* variable and executor config key
// that the deployment files hand to a binary.
func usages(t *testing.T) []usage {
	t.Helper()
	var out []usage
	addArgs := func(tgt target, args []string, where string) {
		for _, a := range args {
			if m := flagRE.FindStringSubmatch(a); m != nil {
				out = append(out, usage{tgt, "flag", m[1], where})
			}
		}
	}
	addEnv := func(tgt target, name, where string) {
		if strings.HasPrefix(name, "SHARDJOB_") {
			out = append(out, usage{tgt, "env", name, where})
		}
	}

	// Compose.
	_, svcs := loadCompose(t)
	for _, s := range svcs {
		var tgt target
		cmd := strs(get(s.def, "command"))
		switch {
		case s.dockerfile() == execDocker:
			tgt = executorCmd
		case s.dockerfile() == adminDocker && len(cmd) > 0 && cmd[0] == "migrate":
			tgt = adminMigrate
		case s.dockerfile() == adminDocker:
			tgt = adminServe
		default:
			continue
		}
		where := composeFile + " service " + s.name
		addArgs(tgt, cmd, where)
		for k := range s.env() {
			addEnv(tgt, k, where)
		}
	}

	// Kubernetes.
	objs := loadK8s(t)
	for _, o := range objs {
		for _, c := range containers(o) {
			tgt := k8sTarget(c)
			if tgt == "" {
				continue
			}
			addArgs(tgt, strs(c["args"]), o.String())
			for _, e := range list(c["env"]) {
				addEnv(tgt, str(get(e, "name")), o.String())
			}
			for _, ef := range list(c["envFrom"]) {
				if cm, ok := find(objs, "ConfigMap", str(get(ef, "configMapRef", "name"))); ok {
					m, _ := get(cm.doc, "data").(map[string]any)
					for k := range m {
						addEnv(tgt, k, cm.String())
					}
				}
			}
		}
		if o.kind() == "ConfigMap" {
			if conf, ok := get(o.doc, "data", "executor.conf").(string); ok {
				for k := range confKeys(t, conf, o.String()) {
					out = append(out, usage{executorCmd, "conf", k, o.String()})
				}
			}
		}
	}

	// systemd.
	for file, tgt := range map[string]target{"shardjob-admin.service": adminServe, "shardjob-executor.service": executorCmd} {
		path := filepath.Join(systemdDir, file)
		addArgs(tgt, strings.Fields(parseUnit(t, path).get("Service", "ExecStart")), path)
	}
	for file, tgt := range map[string]target{"admin.env.example": adminServe, "executor.env.example": executorCmd} {
		path := filepath.Join(systemdDir, file)
		for k := range envFileKeys(t, path) {
			addEnv(tgt, k, path)
		}
	}
	conf := filepath.Join(systemdDir, "executor.conf.example")
	for k := range confKeys(t, string(readFile(t, conf)), conf) {
		out = append(out, usage{executorCmd, "conf", k, conf})
	}

	// Dockerfiles (ENV lines).
	for file, tgt := range map[string]target{"Dockerfile.admin": adminServe, "Dockerfile.executor": executorCmd} {
		path := filepath.Join(dockerDir, file)
		for _, m := range regexp.MustCompile(`(?m)^ENV (SHARDJOB_[A-Z0-9_]+)=`).FindAllStringSubmatch(string(readFile(t, path)), -1) {
			addEnv(tgt, m[1], path)
		}
	}
	return out
}

// helpOf runs a binary with -h and returns its flag names and environment
// variable names.
func helpOf(t *testing.T, bin string, args ...string) (flags, envs map[string]bool) {
	t.Helper()
	cmd := exec.Command(bin, append(args, "-h")...)
	cmd.Env = cleanEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v -h: %v\n%s", bin, args, err, out)
	}
	flags, envs = map[string]bool{}, map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-([a-z][a-z0-9-]*)`).FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`\(env (SHARDJOB_[A-Z0-9_]+)\)`).FindAllStringSubmatch(string(out), -1) {
		envs[m[1]] = true
	}
	if len(flags) == 0 {
		t.Fatalf("%s %v -h listed no flags:\n%s", bin, args, out)
	}
	return flags, envs
}

// cleanEnv is the environment without SHARDJOB_* variables, so that the
// binaries show their built-in defaults.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHARDJOB_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestFlagsExist builds both binaries (with CGO_ENABLED=0, as the images
// do) and checks that every flag, environment variable and config key the
// deployment files use is one the binaries know.
func TestFlagsExist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries; skipped with -short")
	}
	used := usages(t) // before the slow part: fail fast on a parse error
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found:", err)
	}
	dir := t.TempDir()
	bins := map[string]string{}
	for name, pkg := range map[string]string{
		"shardjob-admin":    "./admin/cmd/shardjob-admin",
		"shardjob-executor": "./executor/cmd/shardjob-executor",
	} {
		bins[name] = filepath.Join(dir, name)
		cmd := exec.Command(goBin, "build", "-o", bins[name], pkg)
		cmd.Dir = repoRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("CGO_ENABLED=0 go build %s (the images build it this way): %v\n%s", pkg, err, out)
		}
	}
	known := map[target][2]map[string]bool{}
	for tgt, args := range map[target][]string{
		adminServe:   {bins["shardjob-admin"], "serve"},
		adminMigrate: {bins["shardjob-admin"], "migrate"},
		executorCmd:  {bins["shardjob-executor"]},
	} {
		f, e := helpOf(t, args[0], args[1:]...)
		known[tgt] = [2]map[string]bool{f, e}
	}
	for _, u := range used {
		flags, envs := known[u.target][0], known[u.target][1]
		switch u.kind {
		case "flag":
			if !flags[u.name] {
				t.Errorf("%s: --%s is not a flag of %s", u.where, u.name, u.target)
			}
		case "env":
			if !envs[u.name] {
				t.Errorf("%s: %s is not an environment variable of %s (flags without '(env …)' in -h have none)", u.where, u.name, u.target)
			}
		case "conf":
			if !flags[u.name] || u.name == "config" {
				t.Errorf("%s: config key %q is not a flag of %s", u.where, u.name, u.target)
			}
		}
	}

	// The executor accepts the shipped config files as they are.
	objs := loadK8s(t)
	ecm, _ := find(objs, "ConfigMap", "shardjob-executor")
	k8sConf := filepath.Join(dir, "k8s-executor.conf")
	if err := os.WriteFile(k8sConf, []byte(str(get(ecm.doc, "data", "executor.conf"))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, conf := range []string{k8sConf, filepath.Join(systemdDir, "executor.conf.example")} {
		cmd := exec.Command(bins["shardjob-executor"], "--config", conf, "-h")
		cmd.Env = cleanEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("shardjob-executor --config %s: %v\n%s", conf, err, out)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

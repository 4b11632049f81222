// Command benchtable turns `go test -bench` output (stdin) into the
// Markdown table kept in docs/performance.md: one row per benchmark with
// ns/op, B/op, allocs/op and any custom metrics (b.ReportMetric), headed by
// the machine's core count, Go version and date.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

type row struct {
	pkg, name string
	metrics   map[string]string
	order     []string
}

func main() {
	rows, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	write(os.Stdout, rows, time.Now())
}

func parse(r io.Reader) ([]row, error) {
	var rows []row
	pkg := ""
	pending := "" // a benchmark's name whose results have not come yet
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimPrefix(strings.TrimSpace(rest), "github.com/shardjob/shardjob/")
			pending = ""
			continue
		}
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "Benchmark") && (len(f) == 1 || !isCount(f[1])):
			// go test prints the name before it runs the benchmark and the
			// results after it: anything the benchmark's process wrote to
			// stdout or stderr in between splits the row in two lines.
			pending = f[0]
			continue
		case len(f) >= 3 && pending != "" && isCount(f[0]):
			f = append([]string{pending}, f...)
		case !strings.HasPrefix(line, "Benchmark"):
			continue
		}
		pending = ""
		if len(f) < 4 {
			continue
		}
		rw := row{pkg: pkg, name: trimProcs(f[0]), metrics: map[string]string{}}
		for i := 2; i+1 < len(f); i += 2 {
			rw.metrics[f[i+1]] = f[i]
			rw.order = append(rw.order, f[i+1])
		}
		rows = append(rows, rw)
	}
	return rows, sc.Err()
}

// isCount reports whether s is an iteration count (digits only).
func isCount(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// trimProcs removes the -GOMAXPROCS suffix go test adds to a benchmark's
// name (digits only: "batched-10k" keeps its "-10k").
func trimProcs(name string) string {
	if i := strings.LastIndex(name, "-"); i > 0 && isCount(name[i+1:]) {
		return name[:i]
	}
	return name
}

func write(w io.Writer, rows []row, now time.Time) {
	fmt.Fprintf(w, "Measured %s on %d cores (GOMAXPROCS %d), %s, %s/%s.\n\n",
		now.UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintln(w, "| package | benchmark | ns/op | B/op | allocs/op | other metrics |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---|")
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].pkg < rows[j].pkg })
	for _, r := range rows {
		var extra []string
		for _, k := range r.order {
			switch k {
			case "ns/op", "B/op", "allocs/op":
			default:
				extra = append(extra, r.metrics[k]+" "+k)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.pkg, strings.TrimPrefix(r.name, "Benchmark"),
			dash(r.metrics["ns/op"]), dash(r.metrics["B/op"]), dash(r.metrics["allocs/op"]), strings.Join(extra, ", "))
	}
}

func dash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// Command shardjobctl drives a shardjob admin from the command line with a
// personal API token: jobs as code (apply), listings, trigger, pause and
// resume, and the slots of a run. See docs/cli.md and admin/cli.
//
//	shardjobctl --server http://127.0.0.1:8080 --token sjt_… apply -f jobs.yaml --dry-run
//	shardjobctl get runs --job billing/settle -o json
//
// Exit status: 0 ok, 1 request failed, 2 usage or invalid input, 3 token
// refused or role too low, 4 job or run not found.
package main

import (
	"os"

	"github.com/shardjob/shardjob/admin/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Env{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}))
}

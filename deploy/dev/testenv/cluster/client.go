package cluster

import (
	"net/http"
	"time"

	"github.com/shardjob/shardjob/admin/cli"
)

// NewClient returns a client of the admin at base: cli.Client, the one Go
// client of the admin's API, with a 10 s timeout per request. Its Call
// returns the status of an answer (not an error when it is not 2xx), Do
// fails on it; Login keeps the bearer token of a console session.
func NewClient(base string) *cli.Client {
	return &cli.Client{Base: base, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

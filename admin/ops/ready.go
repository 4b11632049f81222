package ops

import (
	"context"
	"fmt"

	"github.com/shardjob/shardjob/admin/store"
)

// Readiness checks the platform database for GET /readyz: the check
// "database" (reachable) and "migrations" (the schema this binary
// expects), "ok" or what is wrong, and whether both are ok.
func (s *Service) Readiness(ctx context.Context) (checks map[string]string, ready bool) {
	checks = map[string]string{}
	if err := s.st.Ping(ctx); err != nil {
		checks["database"] = err.Error()
		return checks, false
	}
	checks["database"] = "ok"
	v, err := s.st.SchemaVersion(ctx)
	latest, _ := store.LatestVersion(s.st.Dialect())
	if err != nil || v != latest {
		checks["migrations"] = fmt.Sprintf("schema at %d, binary expects %d", v, latest)
		return checks, false
	}
	checks["migrations"] = "ok"
	return checks, true
}

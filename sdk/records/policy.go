package records

import (
	"fmt"

	"github.com/shardjob/shardjob/sdk"
)

// policy is what one Process call uses: the Processor's Config (and
// WithScope) with the job's records policy (sdk.Task.Records, set in the
// job's definition) laid over it. What the job sets wins: the person who
// defines the job decides the guarantee; the handler's Config is the
// default for what the job leaves empty.
type policy struct {
	scope       Scope
	uncertain   UncertainPolicy
	maxAttempts int
	// replacedScope is the scope the handler chose itself (WithScope or
	// Config.Scope) when the job's scope replaced it: the handler may rely
	// on it (two Process calls over different data sets with two scopes
	// would now share one), so Process logs a warning.
	replacedScope Scope
}

// policyFor returns the policy of a Process call for task t.
func (p *Processor) policyFor(t *sdk.Task) (policy, error) {
	pol := policy{scope: p.scope, uncertain: p.cfg.Uncertain, maxAttempts: p.cfg.MaxRecordAttempts}
	jp := t.Records
	switch jp.Scope {
	case "":
	case "run":
		pol.scope = ScopeRun
	case "job":
		pol.scope = ScopeJob
	default:
		pol.scope = Scope(jp.Scope)
	}
	if jp.Scope != "" && p.scope != ScopeRun && pol.scope != p.scope {
		pol.replacedScope = p.scope
	}
	if err := checkScope(pol.scope); err != nil {
		if jp.Scope != "" {
			return policy{}, fmt.Errorf("records: the job's dedup scope: %w", err)
		}
		return policy{}, fmt.Errorf("records: scope: %w", err)
	}
	switch jp.Uncertain {
	case "":
	case "retry":
		pol.uncertain = Retry
	case "skip":
		pol.uncertain = Skip
	default:
		return policy{}, fmt.Errorf("records: the job's uncertain policy is %q: want \"retry\" or \"skip\"", jp.Uncertain)
	}
	switch {
	case jp.MaxAttempts < 0:
		return policy{}, fmt.Errorf("records: the job's record max attempts is %d: want 1 or more", jp.MaxAttempts)
	case jp.MaxAttempts > 0:
		pol.maxAttempts = jp.MaxAttempts
	}
	return pol, nil
}

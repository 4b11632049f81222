package ops

import (
	"context"
	"errors"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
)

// executorWire is executor e as the API answers it.
func executorWire(e store.Executor) apitypes.ExecutorView {
	return apitypes.ExecutorView{
		ID: e.ID, InstanceID: e.InstanceID, App: e.App, Address: e.Address, Capacity: e.Capacity,
		Version: e.Version, Handlers: e.Handlers, State: e.State,
		RegisteredAt: msTime(e.RegisteredAt), LastHeartbeat: msTime(e.LastHeartbeat), DrainRequested: e.DrainRequested,
		Protocol: e.Protocol,
	}
}

// SetDrain drains executor id (drain: it gets no new slots and gives back
// the slots it has queued, which the leader moves elsewhere; its running
// slots finish there) or lets a drained one take slots again. The executor
// process keeps running. An executor of an app the actor may not see does
// not exist for them.
func (s *Service) SetDrain(ctx context.Context, a Actor, id int64, drain bool) (apitypes.ExecutorView, error) {
	e, err := s.st.Executor(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(e.App)) {
		return apitypes.ExecutorView{}, notFound("executor", id)
	}
	if err != nil {
		return apitypes.ExecutorView{}, err
	}
	if err := s.st.SetDrain(ctx, id, drain); err != nil {
		return apitypes.ExecutorView{}, err
	}
	action := "executor.undrain"
	if drain {
		action = "executor.drain"
	}
	s.audit(ctx, a, e.App, action, "executor/"+strconv.FormatInt(id, 10), map[string]any{"instance_id": e.InstanceID, "app": e.App,
		"before": map[string]bool{"drain_requested": e.DrainRequested}, "after": map[string]bool{"drain_requested": drain}})
	s.wake()
	e.DrainRequested = drain
	return executorWire(e), nil
}

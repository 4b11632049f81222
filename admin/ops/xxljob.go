package ops

import (
	"context"
	"errors"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/xxljob"
)

// XXLJob logs and kills attempts on XXL-JOB executors (xxljob.Service).
type XXLJob interface {
	Log(ctx context.Context, token int64, from int) (xxljob.LogResult, error)
	Kill(ctx context.Context, token int64, by string) error
}

// XXLJobEnabled is nil when XXL-JOB support is enabled (Config.XXLJob),
// else ErrNotFound.
func (s *Service) XXLJobEnabled() error {
	if s.cfg.XXLJob == nil {
		return refuse(ErrNotFound, "XXL-JOB executor support is not enabled on this admin", nil)
	}
	return nil
}

// xxljobAttempt returns the run of the attempt of fencing token token,
// when XXL-JOB support is enabled and the actor may see the run (an
// attempt of another app's run does not exist for them).
func (s *Service) xxljobAttempt(ctx context.Context, a Actor, token int64) (store.Run, error) {
	if err := s.XXLJobEnabled(); err != nil {
		return store.Run{}, err
	}
	if token <= 0 {
		return store.Run{}, refuse(ErrInvalid, "token must be a positive integer (the attempt's token, the logId the executor saw), got "+strconv.FormatInt(token, 10), nil)
	}
	at, err := s.st.Attempt(ctx, token)
	if errors.Is(err, store.ErrNotFound) {
		return store.Run{}, refuse(ErrNotFound, "attempt "+strconv.FormatInt(token, 10)+" does not exist", nil)
	}
	if err != nil {
		return store.Run{}, err
	}
	return s.StoredRun(ctx, a, at.RunID)
}

// xxljobRefusal turns the refusals of xxljob.Service into ours; an error
// of the call to the executor passes (admin/api answers 502).
func xxljobRefusal(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return refuse(ErrNotFound, err.Error(), nil)
	case errors.Is(err, xxljob.ErrNotXXL):
		return refuse(ErrConflict, err.Error()+": use the executor's own logs", nil)
	case errors.Is(err, xxljob.ErrNoToken), errors.Is(err, xxljob.ErrEnded):
		return refuse(ErrConflict, err.Error(), nil)
	}
	return err
}

// XXLJobLog is the log of the attempt of fencing token token on its
// XXL-JOB executor, from line from (1-based).
func (s *Service) XXLJobLog(ctx context.Context, a Actor, token int64, from int) (apitypes.XXLJobLog, error) {
	if _, err := s.xxljobAttempt(ctx, a, token); err != nil {
		return apitypes.XXLJobLog{}, err
	}
	if from < 1 {
		return apitypes.XXLJobLog{}, refuse(ErrInvalid, "from must be a line number ≥ 1, got "+strconv.Itoa(from), nil)
	}
	res, err := s.cfg.XXLJob.Log(ctx, token, from)
	if err != nil {
		return apitypes.XXLJobLog{}, xxljobRefusal(err)
	}
	return apitypes.XXLJobLog{Token: token, FromLine: res.FromLineNum, ToLine: res.ToLineNum, Content: res.LogContent, End: res.IsEnd}, nil
}

// XXLJobKill ends the attempt of fencing token token (failed, "killed by
// <user>"; the job's retry policy handles it) and asks its XXL-JOB
// executor to kill the slot's task there (xxljob.Service.Kill);
// ErrConflict when the attempt has ended already.
func (s *Service) XXLJobKill(ctx context.Context, a Actor, token int64) error {
	run, err := s.xxljobAttempt(ctx, a, token)
	if err != nil {
		return err
	}
	if err := s.cfg.XXLJob.Kill(ctx, token, a.User.Username); err != nil {
		return xxljobRefusal(err)
	}
	s.audit(ctx, a, run.App, "xxljob.kill", "attempt/"+strconv.FormatInt(token, 10), nil)
	return nil
}

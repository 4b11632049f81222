package xxljob

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/shardjob/shardjob/admin/schedule"
)

// The wire format of the XXL-JOB 2.4.x admin ⇄ executor protocol, written
// from its public description (the "RESTful API" chapter of the XXL-JOB
// documentation). Every call is an HTTP POST with a JSON body and the
// XXL-JOB-ACCESS-TOKEN header; every answer is a ReturnT envelope, with
// HTTP status 200 even when the envelope reports a failure.

// TokenHeader carries the access token, in both directions.
const TokenHeader = "XXL-JOB-ACCESS-TOKEN"

// ReturnT codes.
const (
	CodeSuccess = 200
	CodeFail    = 500
	// CodeTimeout is the handleCode an executor reports for a run it
	// stopped at its executorTimeout.
	CodeTimeout = 502
)

// ReturnT is the envelope of every answer.
type ReturnT struct {
	Code    int             `json:"code"`
	Msg     *string         `json:"msg"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Message returns msg, or "" when it is null.
func (r ReturnT) Message() string {
	if r.Msg == nil {
		return ""
	}
	return *r.Msg
}

func success() ReturnT { return ReturnT{Code: CodeSuccess} }

func failure(format string, args ...any) ReturnT {
	msg := fmt.Sprintf(format, args...)
	return ReturnT{Code: CodeFail, Msg: &msg}
}

// RegistryParam is the body of /api/registry and /api/registryRemove.
type RegistryParam struct {
	// RegistryGroup is "EXECUTOR" for executors.
	RegistryGroup string `json:"registryGroup"`
	// RegistryKey is the executor's app name.
	RegistryKey string `json:"registryKey"`
	// RegistryValue is the executor's base URL, e.g. "http://10.0.0.5:9999/".
	RegistryValue string `json:"registryValue"`
}

// CallbackParam is one item of the /api/callback body (a JSON array).
type CallbackParam struct {
	LogID      int64 `json:"logId"`
	LogDateTim int64 `json:"logDateTim"`
	// HandleCode: 200 succeeded, 502 timed out, anything else failed.
	HandleCode int    `json:"handleCode"`
	HandleMsg  string `json:"handleMsg"`
	// ExecuteResult is the form of executors of the 2.2 line
	// ({"code":…,"msg":…}); used only when HandleCode is 0.
	ExecuteResult *struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"executeResult,omitempty"`
}

// outcome returns the handle code and message, whichever form was sent.
func (c CallbackParam) outcome() (int, string) {
	if c.HandleCode == 0 && c.ExecuteResult != nil {
		return c.ExecuteResult.Code, c.ExecuteResult.Msg
	}
	return c.HandleCode, c.HandleMsg
}

// slotsPerJobID is how many per-slot XXL-JOB job ids one shardjob job has:
// its slot count is at most 1024.
const slotsPerJobID = 1024

// SlotJobID is the XXL-JOB job id (jobId) the admin sends for a slot of a
// shardjob job: jobID × 1024 + slot. An XXL-JOB executor keys its block
// strategy, its kill and its one-task-at-a-time rule on the job id, so each
// slot gets its own: several slots of one run on one executor run side by
// side, and a kill stops one slot, not its siblings. The handler sees this
// id as its job id (XxlJobHelper.getJobId()); jobID = id / 1024 and slot =
// id % 1024 give the shardjob job and slot back. Executors that read jobId
// as a 32-bit int (the Java xxl-job-core) need jobID ≤ 2,097,150.
func SlotJobID(jobID int64, slot int) int64 { return jobID*slotsPerJobID + int64(slot) }

// TriggerParam is the body of the executor's /run call.
type TriggerParam struct {
	JobID                 int64  `json:"jobId"`
	ExecutorHandler       string `json:"executorHandler"`
	ExecutorParams        string `json:"executorParams"`
	ExecutorBlockStrategy string `json:"executorBlockStrategy"`
	// ExecutorTimeout in seconds; 0 means none.
	ExecutorTimeout int    `json:"executorTimeout"`
	LogID           int64  `json:"logId"`
	LogDateTime     int64  `json:"logDateTime"`
	GlueType        string `json:"glueType"`
	GlueSource      string `json:"glueSource"`
	GlueUpdatetime  int64  `json:"glueUpdatetime"`
	BroadcastIndex  int    `json:"broadcastIndex"`
	BroadcastTotal  int    `json:"broadcastTotal"`
}

// ErrUnreadableAnswer means that the executor answered HTTP 2xx with a body that is
// neither a ReturnT nor a refusal array. XXL-JOB's own admin counts such a
// run call as a failed trigger, and so does the admin (Service.dispatch).
var ErrUnreadableAnswer = errors.New("the answer is neither an XXL-JOB ReturnT nor a refusal array")

// parseAnswer reads an executor's answer. Most executors answer a ReturnT
// object; some third-party executors (the Go client xxl-job-executor-go)
// refuse a run — another task of the job id is running, or the handler is
// not registered — with HTTP 200 and a callback-shaped array
// [{"logId":…,"handleCode":500,"handleMsg":"…"}], which is read here as the
// ReturnT {code: handleCode, msg: handleMsg} of its first item.
func parseAnswer(data []byte) (ReturnT, error) {
	var rt ReturnT
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		var items []CallbackParam
		if err := json.Unmarshal(trimmed, &items); err != nil {
			return rt, fmt.Errorf("%w: %v", ErrUnreadableAnswer, err)
		}
		if len(items) == 0 {
			return rt, fmt.Errorf("%w: an empty array", ErrUnreadableAnswer)
		}
		code, msg := items[0].outcome()
		if code == 0 {
			code = CodeFail // a refusal without a code is still a refusal
		}
		return ReturnT{Code: code, Msg: &msg}, nil
	}
	if err := json.Unmarshal(data, &rt); err != nil {
		return rt, fmt.Errorf("%w: %v", ErrUnreadableAnswer, err)
	}
	return rt, nil
}

// busyRE matches the refusal of an executor that runs one task per job id
// at a time and has one running ("There are tasks running").
var busyRE = regexp.MustCompile(`(?i)\btasks? (is |are )?running\b`)

// GlueBean is the only glue type shardjob dispatches: a handler compiled into
// the executor. Script and source glue types are remote code execution and
// are never sent.
const GlueBean = "BEAN"

// IdleBeatParam is the body of the executor's /idleBeat call.
type IdleBeatParam struct {
	JobID int64 `json:"jobId"`
}

// KillParam is the body of the executor's /kill call.
type KillParam struct {
	JobID int64 `json:"jobId"`
}

// LogParam is the body of the executor's /log call.
type LogParam struct {
	LogDateTim  int64 `json:"logDateTim"`
	LogID       int64 `json:"logId"`
	FromLineNum int   `json:"fromLineNum"`
}

// LogResult is the content of the executor's /log answer.
type LogResult struct {
	FromLineNum int    `json:"fromLineNum"`
	ToLineNum   int    `json:"toLineNum"`
	LogContent  string `json:"logContent"`
	IsEnd       bool   `json:"isEnd"`
}

// Block strategies of XXL-JOB (executorBlockStrategy).
const (
	BlockSerial      = "SERIAL_EXECUTION"
	BlockDiscardLate = "DISCARD_LATER"
	BlockCoverEarly  = "COVER_EARLY"
)

// OverlapForBlockStrategy maps an XXL-JOB job's block strategy to the
// shardjob overlap policy that has the same effect on the job's runs:
// serial execution queues the new run, discard-later skips it, cover-early
// replaces the running one. An empty strategy is XXL-JOB's default (serial).
func OverlapForBlockStrategy(block string) (schedule.OverlapPolicy, error) {
	switch strings.ToUpper(strings.TrimSpace(block)) {
	case "", BlockSerial:
		return schedule.OverlapQueue, nil
	case BlockDiscardLate:
		return schedule.OverlapSkip, nil
	case BlockCoverEarly:
		return schedule.OverlapReplace, nil
	}
	return "", fmt.Errorf("XXL-JOB block strategy %q: must be %s, %s or %s", block, BlockSerial, BlockDiscardLate, BlockCoverEarly)
}

// BlockStrategyForOverlap is the inverse of OverlapForBlockStrategy, for
// documentation and export; "allow" has no XXL-JOB equivalent and maps to
// serial execution, the closest one.
//
// The admin does not send it on the wire: it applies the overlap policy to
// whole runs before dispatch (across every executor, which XXL-JOB's per
// executor block strategy cannot do), and every run call carries
// SERIAL_EXECUTION, because the block strategy of an XXL-JOB executor keys
// on the job id: with DISCARD_LATER or COVER_EARLY, two slots of the same
// run placed on one executor would discard or kill each other.
func BlockStrategyForOverlap(p schedule.OverlapPolicy) string {
	switch p {
	case schedule.OverlapSkip:
		return BlockDiscardLate
	case schedule.OverlapReplace:
		return BlockCoverEarly
	}
	return BlockSerial
}

// Route strategies of XXL-JOB (executorRouteStrategy of a job).
const (
	RouteFirst               = "FIRST"
	RouteLast                = "LAST"
	RouteRound               = "ROUND"
	RouteRandom              = "RANDOM"
	RouteConsistentHash      = "CONSISTENT_HASH"
	RouteLeastFrequentlyUsed = "LEAST_FREQUENTLY_USED"
	RouteLeastRecentlyUsed   = "LEAST_RECENTLY_USED"
	RouteFailover            = "FAILOVER"
	RouteBusyover            = "BUSYOVER"
	RouteShardingBroadcast   = "SHARDING_BROADCAST"
)

// SlotsForRoute returns the slot count a migrated XXL-JOB job should get:
// a sharding-broadcast job ran one shard per executor, so it gets one slot
// per executor it had (at least 1); every other route strategy picked one
// executor per firing, so the job gets 1 slot, and shardjob's placement,
// failover (a failed push moves the slot) and lost-executor recovery take
// the place of the route strategy.
func SlotsForRoute(route string, executors int) (int, error) {
	switch strings.ToUpper(strings.TrimSpace(route)) {
	case RouteShardingBroadcast:
		return min(max(executors, 1), 1024), nil
	case "", RouteFirst, RouteLast, RouteRound, RouteRandom, RouteConsistentHash,
		RouteLeastFrequentlyUsed, RouteLeastRecentlyUsed, RouteFailover, RouteBusyover:
		return 1, nil
	}
	return 0, fmt.Errorf("XXL-JOB route strategy %q is unknown", route)
}

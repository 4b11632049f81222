package xxljob

import (
	"encoding/json"
	"fmt"
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

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

// The wire format of the XXL-JOB admin ⇄ executor protocol, written from
// its public description (the "RESTful API" chapter of the XXL-JOB
// documentation) and from how executors of each generation behave. Every
// call is an HTTP POST with a JSON body and the XXL-JOB-ACCESS-TOKEN header;
// every answer is an envelope with HTTP status 200 even when it reports a
// failure. The generations differ so (Generation):
//
//   - 2.x: envelope ReturnT {code, msg, content}; executor endpoints beat,
//     idleBeat, run, kill, log; callbacks a JSON array of
//     {logId, logDateTim, handleCode, handleMsg}; log request
//     {logDateTim, logId, fromLineNum}.
//   - 3.3: envelope Response {code, msg, data}; callback items and the log
//     request spell logDateTime, and the log request carries jobId.
//   - 3.4.1: as 3.3; the admin's default context path /xxl-job-admin is
//     gone, so executors call /api/… at the admin's root (both are served).
//   - 3.5: the executor's run is called trigger; an XXL-JOB-APPNAME header
//     (the executor's appname) goes with the token in both directions; a
//     callback body is {"callbackList": [ … ]}.
//
// The admin reads every form of every generation (both envelopes, both
// spellings, both callback bodies) and answers only code and msg, which
// both envelopes share. What it sends differs only for 3.5 (trigger, the
// appname header): GenerationOf.

// TokenHeader carries the access token, in both directions.
const TokenHeader = "XXL-JOB-ACCESS-TOKEN"

// AppNameHeader carries the executor's appname next to the token, in both
// directions, from XXL-JOB 3.5 on. The admin sends it to every executor
// (older ones ignore it) and checks it when an executor sends it.
const AppNameHeader = "XXL-JOB-APPNAME"

// Generation is the XXL-JOB protocol generation an executor speaks, as far
// as the admin must tell them apart: what it sends differs only from 3.5
// on. It is detected at registration (an executor that sends the
// AppNameHeader is 3.5) and kept in the executor's version column
// (VersionLabel); a run call that an executor answers with "no such
// endpoint" is tried once under the other generation's name (Client).
type Generation string

const (
	// GenClassic is XXL-JOB 2.x to 3.4.x: run, a bare callback array.
	GenClassic Generation = "2.x-3.4"
	// Gen35 is XXL-JOB 3.5 on: trigger, the appname header, {"callbackList"}.
	Gen35 Generation = "3.5"
)

// versionPrefix starts the executor version the admin records for XXL-JOB
// executors ("xxl-job 3.5").
const versionPrefix = "xxl-job"

// VersionLabel is the executor version recorded for an XXL-JOB executor of
// generation g: "xxl-job 2.x-3.4" or "xxl-job 3.5".
func VersionLabel(g Generation) string { return versionPrefix + " " + string(g) }

// GenerationOf reads the generation back from a recorded executor version;
// anything else (rows registered before generations were told apart:
// "xxl-job") is GenClassic.
func GenerationOf(version string) Generation {
	if strings.TrimSpace(strings.TrimPrefix(version, versionPrefix)) == string(Gen35) {
		return Gen35
	}
	return GenClassic
}

// runOp is the executor endpoint that starts a run in generation g.
func runOp(g Generation) string {
	if g == Gen35 {
		return "trigger"
	}
	return "run"
}

// ReturnT codes.
const (
	CodeSuccess = 200
	CodeFail    = 500
	// CodeTimeout is the handleCode an executor reports for a run it
	// stopped at its executorTimeout.
	CodeTimeout = 502
)

// ReturnT is the envelope of every answer: XXL-JOB 2.x's ReturnT
// {code, msg, content} and 3.3's Response {code, msg, data} in one.
type ReturnT struct {
	Code    int             `json:"code"`
	Msg     *string         `json:"msg"`
	Content json.RawMessage `json:"content,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Message returns msg, or "" when it is null.
func (r ReturnT) Message() string {
	if r.Msg == nil {
		return ""
	}
	return *r.Msg
}

// payload is what the answer carries: data (3.3 on) or content (2.x).
func (r ReturnT) payload() json.RawMessage {
	if len(r.Data) > 0 && string(r.Data) != "null" {
		return r.Data
	}
	if string(r.Content) == "null" {
		return nil
	}
	return r.Content
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

// CallbackParam is one item of the /api/callback body: a JSON array of
// them, or (3.5) {"callbackList": [ … ]}.
type CallbackParam struct {
	LogID int64 `json:"logId"`
	// LogDateTim is the 2.x spelling of the run's log time, LogDateTime
	// the 3.3 one; the admin reads neither (logId names the attempt).
	LogDateTim  int64 `json:"logDateTim,omitempty"`
	LogDateTime int64 `json:"logDateTime,omitempty"`
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

// callbackList is the 3.5 callback body.
type callbackList struct {
	CallbackList *[]CallbackParam `json:"callbackList"`
}

// parseCallbacks reads the body of /api/callback: a JSON array of items
// (2.x to 3.4) or an object {"callbackList": [ … ]} (3.5).
func parseCallbacks(data []byte) ([]CallbackParam, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var body callbackList
		if err := json.Unmarshal(trimmed, &body); err != nil {
			return nil, fmt.Errorf("invalid request body: %w", err)
		}
		if body.CallbackList == nil {
			return nil, errors.New(`invalid request body: an object must be {"callbackList": [ … ]} (XXL-JOB 3.5), or send the bare array [ … ] (2.x to 3.4)`)
		}
		return *body.CallbackList, nil
	}
	var items []CallbackParam
	if err := json.Unmarshal(trimmed, &items); err != nil {
		return nil, fmt.Errorf("invalid request body: want a JSON array of callbacks, or {\"callbackList\": [ … ]}: %w", err)
	}
	return items, nil
}

// noEndpointRE matches the refusal of an executor that has no endpoint of
// the name called (XXL-JOB's executors answer "invalid request,
// uri-mapping(/run) not found."): the run call is tried under the other
// generation's name.
var noEndpointRE = regexp.MustCompile(`(?i)uri-mapping\b`)

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

// LogParam is the body of the executor's /log call. The admin fills every
// field of every generation (2.x reads logDateTim; 3.3 on read logDateTime
// and jobId): executors ignore the fields they do not know.
type LogParam struct {
	LogDateTim  int64 `json:"logDateTim"`
	LogDateTime int64 `json:"logDateTime"`
	LogID       int64 `json:"logId"`
	JobID       int64 `json:"jobId"`
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

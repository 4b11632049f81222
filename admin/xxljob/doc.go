// Package xxljob lets existing XXL-JOB executors (the executor protocol of
// XXL-JOB 2.x to 3.5, which third-party executors in many languages
// implement) register with a shardjob admin and run shardjob jobs
// unchanged: only the executor's admin address (xxl.job.admin.addresses)
// and access token change.
//
// It was written from the public description of the protocol (the
// "RESTful API" chapter of the XXL-JOB documentation); wire.go holds the
// messages and how the versions differ. The admin reads every version's
// forms and tells two generations apart for what it sends (Generation):
// 2.x-3.4 (run) and 3.5 (trigger, the XXL-JOB-APPNAME header, wrapped
// callbacks), detected at registration and recorded as the executor's
// version.
//
// # Pieces
//
//   - Admin API (Service.ServeHTTP, mounted by admin/api at AdminPaths):
//     /api/registry, /api/registryRemove and /api/callback (also under
//     /xxl-job-admin, XXL-JOB's context path before 3.4.1, and written
//     with doubled slashes, "//api/registry", as an executor whose admin
//     address ends in a slash calls them: CleanPath), answering the
//     ReturnT envelope {"code":200,"msg":null} (500 and a message on
//     errors). Each request must carry the XXL-JOB-ACCESS-TOKEN header of
//     the executor's app, configured by the operator (Config.Tokens,
//     --xxljob-tokens); there is no default token and an app without one
//     cannot register. A registered executor is a shardjob executor of its
//     app with protocol "xxljob" (column executor.protocol, migration 0005),
//     instance id "xxljob:<app>@<address>". A registration is refused
//     unless the address is an http(s) URL on a host Config.AllowedHosts
//     allows (AllowedHosts; the Client connects nowhere else), no other
//     live executor has the address (an address belongs to one app and one
//     protocol at a time), and the executor there answers a beat with the
//     app's token. A wrong token and an app without one get one answer.
//   - Liveness (Service.Run, the prober): XXL-JOB executors register only
//     every ~30 s, far less often than shardjob's lost-after, so every
//     Timing.Heartbeat the admin calls each registered executor's beat and
//     records a heartbeat on its behalf when it answers (renewing the leases
//     of its attempts). An executor that stops answering is marked lost by
//     the leader like any other, and its unfinished slots move to other
//     executors with new tokens (scheduler.RecoverLost).
//   - Dispatch (Router, a dispatch.Pusher): routes by executor protocol.
//     shardjob executors go to dispatch.Client; XXL-JOB executors get one
//     run call (trigger from 3.5 on) per slot attempt, sharding-broadcast style: slot index →
//     broadcastIndex, slot count → broadcastTotal, the attempt's token →
//     logId, the run's scheduled time → logDateTime, glueType BEAN (never
//     source glue: no remote code execution), executorBlockStrategy
//     SERIAL_EXECUTION (see BlockStrategyForOverlap), executorTimeout from
//     the job's timeout, and jobId = SlotJobID(job, slot) = job × 1024 +
//     slot: each slot has its own XXL-JOB job id, because an executor
//     keys its block strategy, its kill and (xxl-job-executor-go) its
//     one-task-at-a-time rule on the job id. On the executors of an app in
//     Config.ConcurrentApps (--xxljob-concurrent-apps: executors that keep
//     one task per job id, such as XXL-JOB's Java executor) several slots of
//     one handler thus run side by side. Every other app's executors get
//     one slot per handler at a time: xxl-job-executor-go keeps one task
//     object per handler name, and a second run of the handler overwrites
//     the first's job id, params and cancel function, so that both
//     callbacks carry the second's logId and the first slot would run for
//     ever without one. Of the unfinished attempts of a handler on such an
//     executor only the one with the smallest token is sent
//     (store.XXLHandlerTurns: every replica agrees); the others are held —
//     left assigned and unaccepted, counted in Stats.BusyWaiting — and sent
//     as soon as a callback ends that one (kickHeld, served by Run) or at
//     the next probe. Cancel becomes kill of the slots' job ids; Release
//     gives nothing back (XXL-JOB executors cannot return queued runs).
//   - Answers (Client, parseAnswer): a ReturnT object, or — from executors
//     that refuse a run that way (xxl-job-executor-go) — a callback-shaped
//     array [{"logId":…,"handleCode":500,"handleMsg":…}], read as the
//     ReturnT of its first item. A refusal is a *CallError; "There are
//     tasks running" (CallError.Busy) means the slot's job id has a task
//     there. Anything else is ErrUnreadableAnswer, a failed trigger as for
//     XXL-JOB's own admin — never mistaken for an unreachable executor.
//   - Results (callback): logId → token, handleCode 200 → succeeded,
//     anything else → failed with handleMsg, recorded through
//     runstate.Machine.FinishAttempts, which ignores superseded tokens; the callback is
//     acknowledged anyway so that the executor stops retrying it. The first
//     outcome of an attempt stands: a callback for an attempt that already
//     has one (a duplicate — xxl-job-executor-go sends some twice — or one
//     after the admin killed, cancelled or timed out the attempt) is
//     acknowledged, logged and counted (Stats.IgnoredCallbacks). A success
//     that arrives later than the job's timeout after the run call is a
//     timeout (xxl-job-executor-go calls back success for a task it stopped
//     at executorTimeout). A slot with no callback within its job's timeout
//     (or Config.ResultTimeout) plus Config.ResultGrace fails as timed out,
//     is killed on the executor (freeing its job id) and is retried per the
//     job's retry policy; a slot queued on the executor behind an earlier
//     run of the same slot (same job id) gets one timeout more for each.
//   - Idle check (checkIdle, in each probe of an executor that answered its
//     beat): a slot running there for longer than Config.IdleCheckAfter
//     without a callback is asked about with the executor's idleBeat for
//     its job id, again every IdleCheckAfter. An executor that says it is
//     idle for it, and says so again at least Config.IdleConfirm later with
//     still no callback, has lost it (a callback that did not get through —
//     xxl-job-executor-go does not send one again —, a restart that forgot
//     the task): the attempt is lost (reason attempt.xxl_idle_lost on the
//     run page), placed again with a new token like the slots of a lost
//     executor (no failure counted), and an executor_lost alarm
//     (alarm.xxl_slot_idle) is raised. This happens long before the result
//     timeout, and also for jobs without a timeout. It cannot help a slot
//     the executor still lists as running (xxl-job-executor-go lists the
//     overwritten slot's job id for ever): one slot per handler at a time
//     keeps that from happening.
//   - Console (Service.Log, Service.Kill, served by admin/api under
//     /api/v1/xxljob/attempts/{token}/…): the executor's log of an attempt
//     (its log call) and kill. Kill records the attempt failed ("killed by
//     <user>") before it calls the executor's kill, so that a success
//     callback of the killed task changes nothing on any replica.
//
// # Life of a slot on an XXL-JOB executor
//
//	assigned ──run accepted──▶ running ──callback 200 in time──▶ succeeded
//	   │ │ run refused (code≠200,  │ callback ≠200, late 200, no callback
//	   │ │ array, unreadable)      │ in time, killed from the console
//	   │ └─────────────▶ failed ◀──┘ (retried per the job's retry policy)
//	   ├──refused busy ("There are tasks running")──▶ assigned, sent again
//	   │  at each probe of the executor until it takes it (no failure)
//	   └──another slot of its handler on the executor (app not in
//	      ConcurrentApps)──▶ held: assigned, not sent; sent when that
//	      slot's callback comes, or at the next probe (no failure)
//	running ──idleBeat says idle twice, IdleConfirm apart, no callback──▶
//	      lost (placed again, new token; executor_lost alarm)
//	assigned/running ──run cancelled──▶ cancelled (kill sent; callbacks ignored)
//	assigned/running ──executor stops answering beat──▶ lost (moved, new token)
//
// A run call that does not get through leaves the attempt assigned: the
// scheduler moves it when no call got through, otherwise the prober sends
// it again once the executor answers. A kill that does not get through is
// logged as such: XXL-JOB executors have no heartbeat through which they
// would learn it later; the task may run to its end and its callback is
// ignored.
//
// # Guarantees
//
// As for shardjob executors, a slot runs at least once: a run call whose
// answer was lost may have started the handler while the slot moves on.
// XXL-JOB executors have no shard lock or dedup table, so a handler that
// must apply records once has to be idempotent.
package xxljob

// Package xxljob lets existing XXL-JOB executors (the executor protocol of
// the XXL-JOB 2.4.x line, which third-party executors in many languages
// implement) register with a shardjob admin and run shardjob jobs
// unchanged: only the executor's admin address (xxl.job.admin.addresses)
// and access token change.
//
// It was written from the public description of the protocol (the
// "RESTful API" chapter of the XXL-JOB documentation); wire.go holds the
// messages.
//
// # Pieces
//
//   - Admin API (Service.ServeHTTP, mounted by admin/api at AdminPaths):
//     /api/registry, /api/registryRemove and /api/callback, answering the
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
//     HeartbeatInterval the admin calls each registered executor's beat and
//     records a heartbeat on its behalf when it answers (renewing the leases
//     of its attempts). An executor that stops answering is marked lost by
//     the leader like any other, and its unfinished slots move to other
//     executors with new tokens (scheduler.RecoverLost).
//   - Dispatch (Router, a scheduler.Pusher): routes by executor protocol.
//     shardjob executors go to dispatch.Client; XXL-JOB executors get one
//     run call per slot attempt, sharding-broadcast style: slot index →
//     broadcastIndex, slot count → broadcastTotal, the attempt's token →
//     logId, the run's scheduled time → logDateTime, glueType BEAN (never
//     source glue: no remote code execution), executorBlockStrategy
//     SERIAL_EXECUTION (see BlockStrategyForOverlap), executorTimeout from
//     the job's timeout. Cancel becomes kill of the job; Release gives
//     nothing back (XXL-JOB executors cannot return queued runs).
//   - Results (callback): logId → token, handleCode 200 → succeeded,
//     anything else → failed with handleMsg, recorded through
//     store.FinishAttempts, which ignores superseded tokens; the callback is
//     acknowledged anyway so that the executor stops retrying it. A slot
//     with no callback within its job's timeout (or Config.ResultTimeout)
//     plus Config.ResultGrace fails as timed out and is retried per the
//     job's retry policy; a slot queued on the executor behind other slots
//     of the same job (they run one after the other) gets one timeout more
//     for each.
//   - Console (Service.Log, Service.Kill, served by admin/api under
//     /api/v1/xxljob/attempts/{token}/…): the executor's log of an attempt
//     (its log call) and kill.
//
// # Life of a slot on an XXL-JOB executor
//
//	assigned ──run accepted──▶ running ──callback 200──▶ succeeded
//	   │  run refused (code≠200) │ callback ≠200 or no callback in time
//	   └───────────────▶ failed ◀┘ (retried per the job's retry policy)
//	assigned/running ──executor stops answering beat──▶ lost (moved, new token)
//
// A run call that does not get through leaves the attempt assigned: the
// scheduler moves it when no call got through, otherwise the prober sends
// it again once the executor answers.
//
// # Guarantees
//
// As for shardjob executors, a slot runs at least once: a run call whose
// answer was lost may have started the handler while the slot moves on.
// XXL-JOB executors have no shard lock or dedup table, so a handler that
// must apply records once has to be idempotent.
package xxljob

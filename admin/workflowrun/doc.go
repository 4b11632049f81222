// Package workflowrun is the workflow engine (issue 22): the leader's loop
// that drives workflow runs. The decisions are admin/workflow's (Decide,
// pure); this package reads the state of a run, applies the decision to
// the platform database and creates the job runs of the nodes that start.
//
// # One run, one transaction
//
// Drive moves one workflow run on, in one store transaction fenced by the
// leader epoch (store.Tx.CheckEpoch first, as every write of the
// scheduler): it locks the run, moves it pending → running, ends the
// running node runs whose job run has ended (succeeded; failed,
// partially_failed and skipped become failed; cancelled stays cancelled),
// asks Decide what follows, and applies it:
//
//   - a ready node gets its node run (keyed (workflow run, node, rerun):
//     created once) and, in the same transaction, its job run and the link
//     between them. The job run is an ordinary pending run of the node's
//     job (trigger kind "workflow"), created by the same insert as cron,
//     manual and child runs: the scheduler then starts it on the app's
//     executors, places, retries and fences it, and its dedup scope
//     applies. Its params are the job's (a JSON object) with the workflow
//     run's params laid over them, nothing added (params that are not a
//     JSON object are passed unchanged); its workflow context (workflow
//     run, node, business date, the parents' results: nodeWorkflow) is
//     kept beside them (store.NewRun.Workflow) and reaches the executor as
//     protocol.RunAssignment.Workflow; a dedup scope with placeholders (settle:{date}) is
//     resolved with the business date. A node whose job is gone or
//     disabled, or an inline node (not run yet), fails at once with the
//     reason as an admin/msg code;
//   - a ready node with wait_for (runs of other jobs or workflows of the
//     same business date, store.Tx.WaitSucceeded) gets its node run in
//     status waiting instead, and at each pass, in the same transaction as
//     the rest of the decision, starts (waiting → running, its job run
//     created as above) once every awaited run succeeded, keeps waiting
//     with a reason naming what is missing, or at its deadline raises a
//     workflow_wait_timeout alarm and fails or is skipped (on_timeout);
//   - a skipped node gets a node run in status skipped, saying why
//     (start rule or failure policy stop, and the node that caused it);
//   - once every node has ended, the run ends succeeded, partially_failed
//     or failed, the failed nodes named in its reason.
//
// Since the node run, its job run and the link commit together or not at
// all, and a leader that lost its epoch cannot commit, a node's job run is
// created exactly once per (workflow run, node, rerun) whatever the
// leaders do: a successor finds the node run with its job run, and
// deciding again on the applied decision yields nothing new.
//
// # Firing on a business calendar
//
// A workflow whose schedule names a calendar fires through the jobs'
// calendar planning (scheduler.PlanCalendar): a firing the calendar
// removes is a skipped run with the reason, a shifted one runs keyed by its
// moved instant, with its day as business date.
//
// # The loop
//
// Lead runs for one leadership term alongside the scheduler
// (WhileLeading wraps the term, as retention and utilization do): a pass
// drives every pending or running workflow run (oldest first, Batch per
// pass), then the loop sleeps PollInterval, or less when Wake is called —
// the admin calls it when it accepts a slot result (a node's job run may
// have ended) and when a workflow is triggered; results accepted by another
// replica are seen at the next poll. After a pass that created job runs it
// wakes the scheduler, which starts them at once. A write refused by the
// epoch fence ends the term's loop once a larger epoch is recorded (before
// the scheduler has recorded this term's epoch it only waits).
package workflowrun

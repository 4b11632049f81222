// Package scheduler is the leader's loop: it fires due jobs, places the
// slots of new runs on live executors, pushes the work, and moves slots off
// executors that stopped heartbeating.
//
// Lead runs for one leadership term (one epoch). Every transaction it
// writes starts with store.CheckEpoch, so once another admin has claimed a
// larger epoch this one cannot create or change a run, whatever it believes
// locally; Lead then returns.
//
// One tick:
//
//  1. fire: in one transaction per batch, claim due jobs (oldest first,
//     SKIP LOCKED), let the schedule package decide which firings to create
//     and which to record as skipped (misfire policy), apply the overlap
//     policy, insert the runs (the unique run key drops a firing that exists
//     already) and advance next_fire_at;
//  2. assign: give each pending run's slots to the app's online executors
//     (placement.Spread) and move it to running;
//  3. push: one signed request per executor and run; what is not
//     acknowledged is delivered again in the executor's heartbeat response;
//  4. recover: executors silent for LostAfter (database clock) are marked
//     lost; their unfinished slots get new tokens on live executors.
package scheduler

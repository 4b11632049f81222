// Package alarm delivers alarm events (store.RaiseAlarm) to people: a
// signed generic webhook, Slack-style incoming webhooks, DingTalk and
// Feishu/Lark robots, and SMTP email. docs/alarms.md is the operator's
// guide (channels file, signature verification, throttling).
//
// # Configuration
//
// The platform owner defines channels in a JSON file (File, LoadFile;
// --alarm-channels). Default channels receive every alarm; per-job routes
// (store.AlarmRoute, edited through /api/v1/jobs/:id/alarm-routes) add
// channels or email addresses for one job's alarms. No channel has a
// default secret.
//
// # Delivery, on every replica
//
// Every admin replica runs a Notifier. A round (RunOnce) has two steps,
// each a short transaction, so replicas never send an alarm twice:
//
//  1. Fan out. Claim alarm_event rows not yet fanned out (FOR UPDATE SKIP
//     LOCKED on MySQL; SQLite has one writer), create one pending
//     alarm_delivery per destination (default channels + the job's routes)
//     and mark the alarms fanned out.
//  2. Send. Claim groups that may send now and lease them (alarm_group:
//     one per destination and scope — the job, or the alarm kind for
//     alarms without a job), send one message per group outside any
//     transaction, then record the outcome under the lease.
//
// A delivery's states:
//
//	pending ──send ok──▶ sent
//	   │ ▲
//	   │ └─ send failed, attempts < MaxAttempts: retry at now + backoff
//	   └──── send failed MaxAttempts times ──▶ failed (last error kept)
//
// # One message per alarm group
//
// Every alarm belongs to an alarm group (store: the alarms of a run, of a
// job within an hour, of a kind and app within an hour). Fan-out creates
// deliveries only for an alarm that no earlier open alarm of its group
// precedes: a failed 1024-slot run (1,025 alarms) is one message per
// destination; the group's count is in the console. Once the group is all
// resolved, its next alarm is sent again.
//
// # Throttling and digests
//
// A delivery group sends at most one message per Window. When a group has been
// quiet, its oldest pending alarm goes out alone at once; the alarms that
// arrive while the window is open wait, and when it closes they go out as
// one digest ("37 alarms: 30 run_failed on job 42, …"). A storm of a
// thousand failures is therefore two messages per channel and job per
// window, not a thousand.
//
// # Guarantees
//
// Each alarm is sent once per destination while sends finish within the
// lease (Config.Lease, at least twice SendTimeout). A replica that stalls
// past its lease may have its message sent again by another: delivery is
// at least once, never silently dropped — after MaxAttempts failures the
// error is recorded on the delivery rows and logged.
package alarm

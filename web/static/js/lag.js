// Start lag, the wait users feel: from a run's scheduled time to its first
// slot starting on an executor (queue wait included), not to its assignment.

/**
 * startLag is a run's start lag in ms. For a run still waiting (pending, or
 * running with no slot started yet) it is how long it has waited until now
 * when now is given, and null otherwise; null for a run that ended without
 * starting a slot.
 */
export function startLag(r, now) {
  const sched = Date.parse(r.scheduled_at);
  if (r.first_slot_started_at) return Math.max(0, Date.parse(r.first_slot_started_at) - sched);
  if (now == null || (r.status !== "pending" && r.status !== "running")) return null;
  const waited = now - sched;
  return waited > 0 ? waited : null;
}

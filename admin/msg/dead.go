package msg

// Refusals of a replay of dead letters (POST /api/v1/dead/replay,
// admin/runstate: Machine.Replay).
const (
	DeadNotFound      Code = "dead.not_found"
	DeadReplayed      Code = "dead.replayed"
	DeadRunGone       Code = "dead.run_gone"
	DeadJobDeleted    Code = "dead.job_deleted"
	DeadSlotActive    Code = "dead.slot_active"
	DeadSlotSucceeded Code = "dead.slot_succeeded"
	DeadIDsRange      Code = "dead.ids_range"
	DeadParamsObject  Code = "dead.params_object"
)

// deadCatalog holds the English texts of the dead-letter codes (merged
// into Catalog by init, apart to keep merges of the catalog small).
var deadCatalog = map[Code]string{
	DeadNotFound:      "dead letter {id} does not exist (kept --dead-retention after the slot died) or is of an app you may not see",
	DeadReplayed:      "dead letter {id} was replayed already by {user} at {at} (token {token}): pass force to replay it again",
	DeadRunGone:       "dead letter {id}: run {run} is gone (deleted by retention): trigger the job again instead",
	DeadJobDeleted:    "dead letter {id}: job {job} was deleted, its runs cannot run again",
	DeadSlotActive:    "dead letter {id}: slot {slot} of run {run} runs again already (token {token}): wait until it ends",
	DeadSlotSucceeded: "dead letter {id}: slot {slot} of run {run} has succeeded since (token {token}): nothing to replay",
	DeadIDsRange:      "give 1 to {max} dead letter ids, got {count}",
	DeadParamsObject:  "must be a JSON object (the params the replays run with instead of the job's), got {value}",
}

func init() {
	for c, t := range deadCatalog {
		Catalog[c] = t
	}
}

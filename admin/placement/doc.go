// Package placement decides which executor runs which slot of a run. It is
// pure logic — no I/O, no clock, no goroutines, no randomness — so it is
// tested exhaustively.
//
// # Average allocation
//
// Spread places the slots of one run over the live executors of the job's
// app in proportion to their capacity, starting at an offset derived from
// the job, so that many 1-slot jobs do not all land on the same executor
// (ElasticJob's most reported complaint). Contiguous slots go to the same
// executor, which keeps range-partitioned work local. It needs no history
// and is what a job's first run gets.
//
// # Rebalancing by measured runtime
//
// Once runs have been measured, Balance places slots by their predicted
// runtime, Steal moves unstarted slots to an executor that ran dry during a
// run, and UpdateCost and UpdateSpeed turn the measured durations into the
// next predictions.
//
// The model. A slot j has a cost c_j: its predicted duration in seconds on
// an executor of speed 1. An executor i (a Node) has a Capacity k_i and a
// Speed s_i, and is modelled as k_i parallel lanes of speed s_i: slot j
// occupies one lane for c_j/s_i seconds. Each executor starts its slots in
// descending cost order (ties: lower slot first), each on the first lane to
// become free — list scheduling, which is what an executor that runs "up to
// Capacity slots at once" does when the admin dispatches the slots in that
// order. The predicted makespan (Makespan) is the latest lane finish over
// all executors. LowerBound is the larger of total cost / Σ s_i·k_i (perfect
// balance) and largest cost / fastest speed (one slot cannot be split); no
// placement beats it, and the gap to it is how much there is left to gain.
// Slots never measured (cost 0) get the mean of the measured ones, or 1 when
// none is. Slots already running are not modelled.
//
// Why longest-processing-time-first. Finding the placement with the
// smallest makespan is NP-hard. LPT — sort the slots by cost, largest
// first, and put each on the lane where it would finish earliest — takes
// O(n log n + n·m) and is provably close: on identical lanes its makespan
// is at most 4/3 − 1/(3m) times the optimum for m lanes (Graham, 1969;
// tight: costs 3,3,2,2,2 on two lanes give 7 against 6); on lanes of
// different speeds, with the earliest-finish rule used here, at most
// 2m/(m+1) times (Gonzalez, Ibarra and Sahni, 1977). Placing the large
// slots first is what makes it good: the small slots that come last fill
// the gaps. In practice, with many slots that are small next to the
// makespan, LPT lands within a few percent of LowerBound, which is below
// the noise of the cost predictions themselves: an exact optimiser would
// not pay for itself. (The local search below exists to move fewer slots,
// not to beat LPT.)
//
// Stickiness. Moving a slot has costs the model does not see (warm caches,
// connections, the executor's local state) and every move acts on a
// prediction that may be wrong, so Balance starts from the last owners:
// the sticky plan keeps every slot whose last owner is still alive, and
// adds the others (new slots, slots of executors that left) greedily,
// largest first. Two plans that move more are then built: "improved" moves
// one slot at a time off the executor that finishes last, to where it helps
// most, until it reaches the makespan of a fresh LPT plan (it tends to move
// a few large slots, then smaller ones to fill in); "fresh" is that LPT
// plan, with identical executors relabelled to keep what they had. They are
// tried by number of slots moved, fewest first, and one is taken only when
// its predicted makespan beats the current choice by more than the margin
// (DefaultMargin, 5%). So a balanced cluster with noisy measurements moves nothing, an
// executor that leaves moves only its own slots, one that joins receives
// about its share and little else moves, and a full reshuffle happens only
// when it buys more than the margin over every gentler plan. On 1024 Zipf
// slots the improved plan typically lands within 1% of the fresh one with
// a few dozen moves instead of several hundred.
//
// Determinism. Every result depends only on the input values: slots are
// ordered by cost descending, then slot ascending; executors by ID; ties
// between executors go to the lower ID; float sums are taken in that fixed
// order. ID 0 means "no owner" and is never an executor.
//
// # Measuring
//
// The admin keeps per (job, slot) an EWMA cost and the executor it was last
// measured on, and per executor an EWMA speed (1 when new). When the
// results of a run are in, for each executor i:
//
//  1. speed: predicted = Σ cost_j and actual = Σ duration_j over the slots
//     i ran whose cost was measured on another executor, then
//     speed_i = UpdateSpeed(speed_i, predicted, actual, alpha). A slot
//     measured on i itself only echoes speed_i back (its cost is its past
//     duration on i times speed_i), so it carries no information and would
//     only slow convergence down; slots that moved carry the relative speed
//     of the two executors;
//  2. cost: cost_j = UpdateCost(cost_j, duration_j × speed_i, alpha) with
//     the speed just updated, and remember i as the slot's last executor.
//
// Cost and speed are only known up to a common factor (double every cost
// and every speed and every prediction in seconds stays the same); the
// procedure keeps them consistent through the slots that move. Until it
// has, the slots that stay are predicted right (their cost was measured
// where they run) and only the moved ones are off, which stickiness keeps
// few. BenchmarkRebalance simulates it: 1024 slots with Zipf costs on four
// executors of capacity 4 and speeds 1, 1, 0.7 and 0.4, ±5% noise. Spread
// runs in about 2.0× the lower bound; Balance brings that to about 1.15×
// after the first measured run, 1.05× after the second (at most 1.08× over
// ten clusters), moving a few dozen of the 1024 slots each time.
//
// # Work stealing
//
// Within a run, an executor that has started all its slots asks for more.
// Steal takes from the executor with the largest predicted remaining time
// (its unstarted slots, list-scheduled over its lanes) its largest slot
// whose move shortens the victim and leaves the thief finishing no later
// than the victim, and repeats until the busiest executor has nothing that
// fits. The predicted makespan therefore never grows, the thief never
// becomes the new straggler, nothing is stolen back, and running slots
// (not modelled) only make Steal take less than it could.
package placement

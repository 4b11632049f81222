// Package placement decides which executor runs which slot of a run. It is
// pure logic — no I/O, no clock — so it is tested exhaustively.
//
// Spread places the slots of one run over the live executors of the job's
// app in proportion to their capacity, starting at an offset derived from
// the job, so that many 1-slot jobs do not all land on the same executor
// (ElasticJob's most reported complaint). Contiguous slots go to the same
// executor, which keeps range-partitioned work local.
package placement

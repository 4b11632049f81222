package partition_test

import (
	"fmt"
	"slices"

	"github.com/shardjob/shardjob/admin/partition"
)

// printLoads prints how many partitions each admin owns, by admin id.
func printLoads(a partition.Assignment) {
	loads := a.Loads()
	ids := make([]string, 0, len(loads))
	for id := range loads {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Printf("%s owns %d\n", id, loads[id])
	}
}

// Three admins split the 256 partitions, then a fourth joins: it takes a
// quarter of them from the others, and nothing else moves.
func ExampleRebalance() {
	const term = 1 // the leader's election epoch
	admins := []string{"admin-a", "admin-b", "admin-c"}
	first, moved, err := partition.Rebalance(partition.Assignment{}, admins, partition.DefaultCount,
		partition.NextEpoch(term, 1))
	if err != nil {
		fmt.Println(err)
		return
	}
	printLoads(first)
	fmt.Println("moved", moved)

	admins = append(admins, "admin-d")
	second, moved, err := partition.Rebalance(first, admins, partition.DefaultCount, partition.NextEpoch(term, 2))
	if err != nil {
		fmt.Println(err)
		return
	}
	printLoads(second)
	fmt.Println("moved", moved)
	claim := second.Owned("admin-d")[0]
	fmt.Printf("admin-d claims partition %d with epoch %#x\n", claim.Partition, claim.Epoch)
	// Output:
	// admin-a owns 86
	// admin-b owns 85
	// admin-c owns 85
	// moved 256
	// admin-a owns 64
	// admin-b owns 64
	// admin-c owns 64
	// admin-d owns 64
	// moved 64
	// admin-d claims partition 3 with epoch 0x100000002
}

// Of hashes a job id into its partition; the admin owning that partition
// schedules the job.
func ExampleOf() {
	for _, jobID := range []int64{1, 2, 3} {
		fmt.Printf("job %d is in partition %d\n", jobID, partition.Of(jobID, partition.DefaultCount))
	}
	// Output:
	// job 1 is in partition 97
	// job 2 is in partition 195
	// job 3 is in partition 37
}

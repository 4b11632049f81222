package ownership

import (
	"context"

	"github.com/shardjob/shardjob/admin/coord"
)

// Follow applies one view of the assignment, as Run does at each change.
func (k *Keeper) Follow(ctx context.Context, pub coord.Published) bool { return k.follow(ctx, pub) }

-- Placeholder so that this branch's migration 0035 has no gap: the number
-- 0034 belongs to another branch; delete this file when merging it.
SELECT 1;

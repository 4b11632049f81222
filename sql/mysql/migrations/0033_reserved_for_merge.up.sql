-- Placeholder so that this branch's migration 0034 has no gap: the numbers
-- 0030-0033 belong to other branches; delete this file when merging them.
SELECT 1;

-- Placeholder so that this branch's migration 0036 has no gap: the numbers
-- 0034 and 0035 belong to other branches of issue 31. Delete this file when
-- merging those.
SELECT 1;

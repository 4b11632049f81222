-- Placeholder so that this branch's migration 0032 has no gap: the numbers
-- 0030 and 0031 belong to other branches of issue 30. Delete this file when
-- merging those.
SELECT 1;

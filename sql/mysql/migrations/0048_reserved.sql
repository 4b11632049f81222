-- migrate up
-- PLACEHOLDER for the dead-letters branch's migration 0048 (issue 37): the
-- migrations may have no gap, and 0049 (breakers) is numbered after it.
-- Delete this file when that migration is merged; it does nothing.
SELECT 1;

-- migrate down
SELECT 1;

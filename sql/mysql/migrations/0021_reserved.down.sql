-- See the up file: a no-op.
SELECT 1;

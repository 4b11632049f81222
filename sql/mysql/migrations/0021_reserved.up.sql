-- Reserved for the migration of another branch (issue 22 work in
-- parallel); a no-op so that this branch builds alone. Removed when the
-- branches merge.
SELECT 1;

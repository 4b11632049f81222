-- Reserved for another branch (merged separately); replaced when merging.
SELECT 1;

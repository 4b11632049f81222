-- Reserved: version 0030 is another branch's; this no-op keeps the versions
-- without a gap until that branch is merged, which replaces this file.
SELECT 1;

-- migrate up
-- A workflow's schedule on its business calendar (issue 22): the rule and
-- shift of a job's calendar (docs/schedules.md), for the calendar the
-- workflow names (column calendar, migration 0022).
ALTER TABLE workflow ADD COLUMN calendar_rule VARCHAR(24) NOT NULL DEFAULT '', ADD COLUMN calendar_shift VARCHAR(16) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE workflow DROP COLUMN calendar_shift, DROP COLUMN calendar_rule;

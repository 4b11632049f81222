-- migrate up
-- A workflow's schedule on its business calendar: see the MySQL migration of the same version.
ALTER TABLE workflow ADD COLUMN calendar_rule TEXT NOT NULL DEFAULT '';
ALTER TABLE workflow ADD COLUMN calendar_shift TEXT NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE workflow DROP COLUMN calendar_shift;
ALTER TABLE workflow DROP COLUMN calendar_rule;

ALTER TABLE workflow DROP COLUMN calendar_shift;
ALTER TABLE workflow DROP COLUMN calendar_rule;

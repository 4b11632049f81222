ALTER TABLE workflow DROP COLUMN calendar_shift, DROP COLUMN calendar_rule;

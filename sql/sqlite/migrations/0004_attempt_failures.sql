-- migrate up
-- failures: how many attempts of this slot failed before this one (since the
-- run started or was last retried by hand). Lost and moved attempts do not
-- count: a slot moved off a dead executor keeps its retry budget.
ALTER TABLE slot_attempt ADD COLUMN failures INT NOT NULL DEFAULT 0;

-- migrate down
ALTER TABLE slot_attempt DROP COLUMN failures;

-- migrate up
-- drain_requested: an operator asked (console or API) that this executor
-- get no new slots and give back the ones it has queued; its running slots
-- finish there. Heartbeats do not change it.
ALTER TABLE executor ADD COLUMN drain_requested TINYINT NOT NULL DEFAULT 0;

-- migrate down
ALTER TABLE executor DROP COLUMN drain_requested;

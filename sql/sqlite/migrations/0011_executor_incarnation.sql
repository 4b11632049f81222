-- migrate up
-- incarnation: a random id each executor process sends in its heartbeats,
-- new at every start. A heartbeat with another incarnation than the stored
-- one means the instance restarted under the same instance id: the slots
-- its previous process held are lost at once (except those whose results
-- it still holds) instead of looking running forever. '' until the first
-- heartbeat that carries one (executors built before it never send one).
ALTER TABLE executor ADD COLUMN incarnation VARCHAR(64) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE executor DROP COLUMN incarnation;

DROP TABLE IF EXISTS alarm_delivery;
DROP TABLE IF EXISTS alarm_group;
DROP TABLE IF EXISTS job_alarm_route;
DROP INDEX IF EXISTS idx_alarm_fanout;
ALTER TABLE alarm_event DROP COLUMN fanned_out;

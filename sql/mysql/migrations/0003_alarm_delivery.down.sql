DROP TABLE IF EXISTS alarm_delivery;
DROP TABLE IF EXISTS alarm_group;
DROP TABLE IF EXISTS job_alarm_route;
ALTER TABLE alarm_event DROP INDEX idx_alarm_fanout;
ALTER TABLE alarm_event DROP COLUMN fanned_out;

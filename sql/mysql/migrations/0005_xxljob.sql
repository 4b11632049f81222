-- migrate up
-- protocol: how the admin talks to an executor. 'shardjob' executors use
-- shardjob's signed protocol (heartbeat, assign, results); 'xxljob'
-- executors are unchanged XXL-JOB 2.4.x executors that registered through
-- /api/registry: the admin probes them (beat), dispatches with their run
-- call and takes results from /api/callback (admin/xxljob).
ALTER TABLE executor ADD COLUMN protocol VARCHAR(16) NOT NULL DEFAULT 'shardjob';

-- migrate down
ALTER TABLE executor DROP COLUMN protocol;

-- migrate up
-- accept_seq: the executor process's number of the assignment batch that
-- accepted the attempt (protocol AcceptSeq), set by the first
-- acknowledgement. A heartbeat built after that batch must report the
-- token (running, queued, released or finished-unsent); if it does not, the
-- process no longer has it and the attempt is lost at once instead of
-- looking running until someone notices. NULL for executors that do not
-- number their batches (built before it; XXL-JOB executors).
ALTER TABLE slot_attempt ADD COLUMN accept_seq BIGINT NULL;

-- migrate down
ALTER TABLE slot_attempt DROP COLUMN accept_seq;

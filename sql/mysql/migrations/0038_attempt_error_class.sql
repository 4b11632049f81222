-- migrate up
-- Error classes of failed attempts (issue 37, docs/failures.md).
--
-- error_class: how an attempt ended, when it did not succeed: permanent (not
-- retried), retryable, timeout, lost or cancelled; '' for a succeeded,
-- unfinished or moved attempt, and for attempts recorded before this
-- version. retry_after_ms: the least delay before the next attempt that the
-- handler asked for (sdk.RetryAfter, an HTTP Retry-After), already capped;
-- NULL when it asked for none. Adding columns with defaults is instant in
-- MySQL 8 and MariaDB >= 10.3.
ALTER TABLE slot_attempt
  ADD COLUMN error_class VARCHAR(16) NOT NULL DEFAULT '',
  ADD COLUMN retry_after_ms BIGINT NULL;

-- migrate down
ALTER TABLE slot_attempt DROP COLUMN error_class, DROP COLUMN retry_after_ms;

-- migrate up
-- Retry budgets and circuit breakers: see the MySQL migration of the same
-- version.
ALTER TABLE job ADD COLUMN breaker_threshold INT NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN breaker_cooldown TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN retry_budget_percent INT NOT NULL DEFAULT 0;
ALTER TABLE job ADD COLUMN retry_budget_window TEXT NOT NULL DEFAULT '';
ALTER TABLE job ADD COLUMN retry_backoff_max TEXT NOT NULL DEFAULT '';
ALTER TABLE slot_attempt ADD COLUMN no_retry SMALLINT NOT NULL DEFAULT 0;
CREATE TABLE job_breaker (
  job_id      BIGINT  NOT NULL PRIMARY KEY,
  app         TEXT    NOT NULL,
  state       TEXT    NOT NULL DEFAULT 'closed',
  failures    INT     NOT NULL DEFAULT 0,
  last_error  TEXT    NOT NULL DEFAULT '',
  opened_at   BIGINT  NULL,
  reason      TEXT    NULL,
  probe_at    BIGINT  NULL,
  probe_token BIGINT  NULL,
  epoch       BIGINT  NOT NULL DEFAULT 0
);

-- migrate down
DROP TABLE job_breaker;
ALTER TABLE slot_attempt DROP COLUMN no_retry;
ALTER TABLE job DROP COLUMN retry_backoff_max;
ALTER TABLE job DROP COLUMN retry_budget_window;
ALTER TABLE job DROP COLUMN retry_budget_percent;
ALTER TABLE job DROP COLUMN breaker_cooldown;
ALTER TABLE job DROP COLUMN breaker_threshold;

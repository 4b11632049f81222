-- migrate up
-- Retry budgets and circuit breakers (issue 37, docs/failures.md): a job's
-- breaker and budget settings ('' for a duration that takes its default),
-- a slot that may not be retried any more (its retry budget was spent),
-- and the state of the breakers that have one (a job absent from
-- job_breaker is closed with no failure counted).
ALTER TABLE job ADD COLUMN breaker_threshold INT NOT NULL DEFAULT 0,
  ADD COLUMN breaker_cooldown VARCHAR(32) NOT NULL DEFAULT '',
  ADD COLUMN retry_budget_percent INT NOT NULL DEFAULT 0,
  ADD COLUMN retry_budget_window VARCHAR(32) NOT NULL DEFAULT '',
  ADD COLUMN retry_backoff_max VARCHAR(32) NOT NULL DEFAULT '';
ALTER TABLE slot_attempt ADD COLUMN no_retry TINYINT NOT NULL DEFAULT 0;
CREATE TABLE job_breaker (
  job_id      BIGINT        NOT NULL PRIMARY KEY,
  app         VARCHAR(64)   NOT NULL,
  state       VARCHAR(16)   NOT NULL DEFAULT 'closed',
  failures    INT           NOT NULL DEFAULT 0,
  last_error  VARCHAR(512)  NOT NULL DEFAULT '',
  opened_at   BIGINT        NULL,
  reason      TEXT          NULL,
  probe_at    BIGINT        NULL,
  probe_token BIGINT        NULL,
  epoch       BIGINT        NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- migrate down
DROP TABLE job_breaker;
ALTER TABLE slot_attempt DROP COLUMN no_retry;
ALTER TABLE job DROP COLUMN retry_backoff_max, DROP COLUMN retry_budget_window, DROP COLUMN retry_budget_percent,
  DROP COLUMN breaker_cooldown, DROP COLUMN breaker_threshold;

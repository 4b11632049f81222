-- migrate up
-- shardjob platform schema, SQLite (embedded, standalone mode).
-- All instants are BIGINT Unix milliseconds (UTC), in both dialects, so that
-- comparisons, keyset pagination and the database clock behave the same.

CREATE TABLE leader (
  id         TINYINT      NOT NULL PRIMARY KEY,
  epoch      BIGINT       NOT NULL,
  holder     VARCHAR(255) NOT NULL,
  since_ms   BIGINT       NOT NULL
);

INSERT INTO leader (id, epoch, holder, since_ms) VALUES (1, 0, '', 0);

CREATE TABLE job (
  id              INTEGER      PRIMARY KEY AUTOINCREMENT,
  app             VARCHAR(64)  NOT NULL,
  name            VARCHAR(128) NOT NULL,
  description     VARCHAR(1024) NOT NULL DEFAULT '',
  handler         VARCHAR(128) NOT NULL,
  cron_expr       VARCHAR(255) NOT NULL,
  time_zone       VARCHAR(64)  NOT NULL DEFAULT 'UTC',
  misfire_policy  VARCHAR(16)  NOT NULL DEFAULT 'run_once',
  overlap_policy  VARCHAR(16)  NOT NULL DEFAULT 'allow',
  misfire_threshold_ms BIGINT  NOT NULL DEFAULT 60000,
  max_catch_up    INT          NOT NULL DEFAULT 10,
  slot_count      INT          NOT NULL DEFAULT 1,
  slot_params     TEXT         NOT NULL,
  params          TEXT         NOT NULL,
  timeout_ms      BIGINT       NOT NULL DEFAULT 0,
  retry_max       INT          NOT NULL DEFAULT 0,
  retry_backoff_ms BIGINT      NOT NULL DEFAULT 1000,
  enabled         TINYINT      NOT NULL DEFAULT 1,
  paused          TINYINT      NOT NULL DEFAULT 0,
  child_job_ids   VARCHAR(1024) NOT NULL DEFAULT '',
  next_fire_at    BIGINT       NULL,
  created_at      BIGINT       NOT NULL,
  updated_at      BIGINT       NOT NULL,
  version         BIGINT       NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX uk_job_app_name ON job (app, name);
CREATE INDEX idx_job_due ON job (enabled, next_fire_at);

CREATE TABLE job_run (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  job_id        BIGINT       NOT NULL,
  scheduled_at  BIGINT       NOT NULL,
  trigger_kind  VARCHAR(16)  NOT NULL,
  status        VARCHAR(24)  NOT NULL,
  params        TEXT         NOT NULL,
  slot_count    INT          NOT NULL,
  slots_succeeded INT        NOT NULL DEFAULT 0,
  slots_failed  INT          NOT NULL DEFAULT 0,
  epoch         BIGINT       NOT NULL,
  created_at    BIGINT       NOT NULL,
  started_at    BIGINT       NULL,
  finished_at   BIGINT       NULL,
  error         VARCHAR(2048) NOT NULL DEFAULT '',
  predicted_ms  BIGINT       NULL,
  parent_run_id BIGINT       NULL
);
CREATE UNIQUE INDEX uk_run_parent ON job_run (job_id, parent_run_id);
CREATE UNIQUE INDEX uk_run_key ON job_run (job_id, scheduled_at);
CREATE INDEX idx_run_status ON job_run (status, scheduled_at);
CREATE INDEX idx_run_created ON job_run (created_at, id);

-- One attempt of one slot. The row id is the attempt's fencing token: a later
-- attempt always has a larger id.
CREATE TABLE slot_attempt (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  run_id        BIGINT       NOT NULL,
  slot          INT          NOT NULL,
  attempt       INT          NOT NULL,
  executor_id   BIGINT       NULL,
  status        VARCHAR(16)  NOT NULL,
  current       TINYINT      NOT NULL DEFAULT 1,
  dispatched_at BIGINT       NULL,
  acked         TINYINT      NOT NULL DEFAULT 0,
  lease_until   BIGINT       NULL,
  started_at    BIGINT       NULL,
  finished_at   BIGINT       NULL,
  processed     BIGINT       NOT NULL DEFAULT 0,
  skipped       BIGINT       NOT NULL DEFAULT 0,
  failed        BIGINT       NOT NULL DEFAULT 0,
  uncertain     BIGINT       NOT NULL DEFAULT 0,
  error         VARCHAR(2048) NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX uk_slot_attempt ON slot_attempt (run_id, slot, attempt);
CREATE INDEX idx_attempt_executor ON slot_attempt (executor_id, status);
CREATE INDEX idx_attempt_status ON slot_attempt (status, id);

CREATE TABLE executor (
  id             INTEGER      PRIMARY KEY AUTOINCREMENT,
  instance_id    VARCHAR(191) NOT NULL,
  app            VARCHAR(64)  NOT NULL,
  address        VARCHAR(255) NOT NULL,
  capacity       INT          NOT NULL,
  speed          DOUBLE       NOT NULL DEFAULT 1,
  version        VARCHAR(64)  NOT NULL DEFAULT '',
  handlers       TEXT         NOT NULL,
  state          VARCHAR(16)  NOT NULL,
  registered_at  BIGINT       NOT NULL,
  last_heartbeat BIGINT       NOT NULL
);
CREATE UNIQUE INDEX uk_executor_instance ON executor (instance_id);
CREATE INDEX idx_executor_app ON executor (app, state);

CREATE TABLE app_user (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  username      VARCHAR(64)  NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  role          VARCHAR(16)  NOT NULL,
  created_at    BIGINT       NOT NULL
);
CREATE UNIQUE INDEX uk_user_name ON app_user (username);

CREATE TABLE user_session (
  token_hash  CHAR(64)     NOT NULL PRIMARY KEY,
  user_id     BIGINT       NOT NULL,
  expires_at  BIGINT       NOT NULL
);
CREATE INDEX idx_session_expiry ON user_session (expires_at);

CREATE TABLE audit_log (
  id          INTEGER      PRIMARY KEY AUTOINCREMENT,
  at          BIGINT       NOT NULL,
  actor       VARCHAR(64)  NOT NULL,
  action      VARCHAR(64)  NOT NULL,
  object      VARCHAR(255) NOT NULL,
  detail      TEXT         NOT NULL
);
CREATE INDEX idx_audit_at ON audit_log (at, id);

-- Events that need an operator's attention: missed firings, lost executors,
-- failed runs. dedup_key makes raising the same event twice a no-op.
CREATE TABLE alarm_event (
  id          INTEGER      PRIMARY KEY AUTOINCREMENT,
  at          BIGINT       NOT NULL,
  kind        VARCHAR(32)  NOT NULL,
  severity    VARCHAR(16)  NOT NULL,
  job_id      BIGINT       NULL,
  run_id      BIGINT       NULL,
  dedup_key   VARCHAR(191) NOT NULL,
  message     VARCHAR(2048) NOT NULL,
  raised_by   VARCHAR(191) NOT NULL
);
CREATE UNIQUE INDEX uk_alarm_dedup ON alarm_event (dedup_key);
CREATE INDEX idx_alarm_at ON alarm_event (at, id);

-- Measured cost of each slot of each job (EWMA of its duration normalised
-- to a speed-1 executor, and of its records): the rebalancer's input.
CREATE TABLE slot_stats (
  job_id         BIGINT       NOT NULL,
  slot           INT          NOT NULL,
  cost_ms        DOUBLE       NOT NULL,
  records        DOUBLE       NOT NULL,
  samples        INT          NOT NULL,
  last_executor  BIGINT       NULL,
  updated_at     BIGINT       NOT NULL,
  PRIMARY KEY (job_id, slot)
);

-- migrate down
DROP TABLE IF EXISTS slot_stats;
DROP TABLE IF EXISTS alarm_event;
DROP TABLE IF EXISTS audit_log;
DROP TABLE IF EXISTS user_session;
DROP TABLE IF EXISTS app_user;
DROP TABLE IF EXISTS executor;
DROP TABLE IF EXISTS slot_attempt;
DROP TABLE IF EXISTS job_run;
DROP TABLE IF EXISTS job;
DROP TABLE IF EXISTS leader;

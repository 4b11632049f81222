-- migrate up
-- Alarm delivery (docs/alarms.md): per-job recipients, and the bookkeeping
-- that lets every admin replica run the notifier without sending an alarm
-- twice.

-- Extra recipients of one job's alarms, on top of the default channels: a
-- configured channel (recipient '') or an address on an email channel.
CREATE TABLE job_alarm_route (
  job_id     BIGINT       NOT NULL,
  channel    VARCHAR(64)  NOT NULL,
  recipient  VARCHAR(254) NOT NULL DEFAULT '',
  PRIMARY KEY (job_id, channel, recipient)
);

-- fanned_out = 1 once the alarm's deliveries were created. Alarms raised
-- before this migration are not sent.
ALTER TABLE alarm_event ADD COLUMN fanned_out TINYINT NOT NULL DEFAULT 0;
UPDATE alarm_event SET fanned_out = 1;
CREATE INDEX idx_alarm_fanout ON alarm_event (fanned_out, id);

-- One throttling group: a destination (channel + recipient) and a scope
-- (a job, or an alarm kind for alarms without a job). At most one message
-- per window per group; the row is also the unit a replica claims (lease).
CREATE TABLE alarm_group (
  group_key    CHAR(40)      NOT NULL PRIMARY KEY,
  channel      VARCHAR(64)   NOT NULL,
  recipient    VARCHAR(254)  NOT NULL,
  job_id       BIGINT        NULL,
  kind         VARCHAR(32)   NOT NULL,
  window_until BIGINT        NOT NULL DEFAULT 0,
  retry_at     BIGINT        NOT NULL DEFAULT 0,
  attempts     INT           NOT NULL DEFAULT 0,
  last_error   VARCHAR(1024) NOT NULL DEFAULT '',
  lease_owner  VARCHAR(64)   NOT NULL DEFAULT '',
  lease_until  BIGINT        NOT NULL DEFAULT 0,
  last_sent_at BIGINT        NULL
);

-- One alarm for one group: pending, then sent or failed (gave up).
CREATE TABLE alarm_delivery (
  id          INTEGER       PRIMARY KEY AUTOINCREMENT,
  alarm_id    BIGINT        NOT NULL,
  group_key   CHAR(40)      NOT NULL,
  status      VARCHAR(16)   NOT NULL,
  created_at  BIGINT        NOT NULL,
  claim       VARCHAR(64)   NOT NULL DEFAULT '',
  attempts    INT           NOT NULL DEFAULT 0,
  last_error  VARCHAR(1024) NOT NULL DEFAULT '',
  done_at     BIGINT        NULL
);
CREATE UNIQUE INDEX uk_delivery ON alarm_delivery (alarm_id, group_key);
CREATE INDEX idx_delivery_group ON alarm_delivery (group_key, status, id);
CREATE INDEX idx_delivery_claim ON alarm_delivery (claim);

-- migrate down
DROP TABLE IF EXISTS alarm_delivery;
DROP TABLE IF EXISTS alarm_group;
DROP TABLE IF EXISTS job_alarm_route;
DROP INDEX IF EXISTS idx_alarm_fanout;
ALTER TABLE alarm_event DROP COLUMN fanned_out;

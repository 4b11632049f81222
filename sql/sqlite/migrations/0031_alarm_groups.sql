-- migrate up
-- Alarm groups: see the MySQL migration of the same version.
CREATE TABLE alarm_event_group (
  id          INTEGER      PRIMARY KEY AUTOINCREMENT,
  group_key   VARCHAR(191) NOT NULL,
  scope       VARCHAR(191) NOT NULL DEFAULT '',
  app         VARCHAR(64)  NOT NULL DEFAULT '',
  created_at  BIGINT       NOT NULL
);
CREATE UNIQUE INDEX uk_alarm_event_group ON alarm_event_group (group_key);
CREATE INDEX idx_alarm_event_group_scope ON alarm_event_group (scope, created_at);
ALTER TABLE alarm_event ADD COLUMN group_id BIGINT NULL;
ALTER TABLE alarm_event ADD COLUMN executor_id BIGINT NULL;
ALTER TABLE alarm_event ADD COLUMN resolved_msg VARCHAR(1024) NOT NULL DEFAULT '';
INSERT INTO alarm_event_group (id, group_key, scope, app, created_at) SELECT id, 'alarm:' || id, 'alarm:' || id, app, at FROM alarm_event;
UPDATE alarm_event SET group_id = id;
CREATE INDEX idx_alarm_group ON alarm_event (group_id, id);
CREATE INDEX idx_alarm_kind_open ON alarm_event (kind, resolved_at);
CREATE INDEX idx_alarm_open ON alarm_event (resolved_at, group_id);

-- migrate down
DROP INDEX idx_alarm_open;
DROP INDEX idx_alarm_kind_open;
DROP INDEX idx_alarm_group;
ALTER TABLE alarm_event DROP COLUMN group_id;
ALTER TABLE alarm_event DROP COLUMN executor_id;
ALTER TABLE alarm_event DROP COLUMN resolved_msg;
DROP TABLE alarm_event_group;

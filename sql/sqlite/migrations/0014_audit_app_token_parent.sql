-- migrate up
-- Authorisation data (issue 17): see the MySQL migration of the same
-- version for the meaning of each column. In short: audit_log.app and
-- alarm_event.app say which app's users may read an entry ('' = admins
-- only for the audit log, users without an app limit for alarms);
-- audit_log.owner_id lets a user read the entries about their own account;
-- api_token.parent_id is the token that created a token; user names are
-- case-insensitive.
ALTER TABLE audit_log ADD COLUMN app VARCHAR(64) NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN owner_id BIGINT NOT NULL DEFAULT 0;
-- CAST takes the leading digits of the text ('12' of '12:x'), 0 if none.
UPDATE audit_log SET app = COALESCE((SELECT j.app FROM job j WHERE j.id = CAST(substr(audit_log.object, 5) AS INTEGER)), '')
WHERE object GLOB 'job/[0-9]*';
UPDATE audit_log SET app = COALESCE((SELECT r.app FROM job_run r WHERE r.id = CAST(substr(audit_log.object, 5) AS INTEGER)), '')
WHERE object GLOB 'run/[0-9]*';
UPDATE audit_log SET app = COALESCE((SELECT e.app FROM executor e WHERE e.id = CAST(substr(audit_log.object, 10) AS INTEGER)), '')
WHERE object GLOB 'executor/[0-9]*';
UPDATE audit_log SET app = COALESCE((SELECT r.app FROM slot_attempt t JOIN job_run r ON r.id = t.run_id
                                     WHERE t.id = CAST(substr(audit_log.object, 9) AS INTEGER)), '')
WHERE object GLOB 'attempt/[0-9]*';
UPDATE audit_log SET owner_id = COALESCE((SELECT t.user_id FROM api_token t WHERE t.id = CAST(substr(audit_log.object, 7) AS INTEGER)), 0)
WHERE object GLOB 'token/[0-9]*';
UPDATE audit_log SET owner_id = COALESCE((SELECT u.id FROM app_user u WHERE u.username = audit_log.actor AND u.created_at <= audit_log.at), 0)
WHERE action IN ('login', 'user.password');

ALTER TABLE alarm_event ADD COLUMN app VARCHAR(64) NOT NULL DEFAULT '';
UPDATE alarm_event SET app = COALESCE((SELECT j.app FROM job j WHERE j.id = alarm_event.job_id), '')
WHERE job_id IS NOT NULL;
UPDATE alarm_event SET app = COALESCE((SELECT r.app FROM job_run r WHERE r.id = alarm_event.run_id), '')
WHERE app = '' AND run_id IS NOT NULL;
UPDATE alarm_event SET app = COALESCE((SELECT e.app FROM executor e WHERE e.id = CAST(substr(alarm_event.dedup_key, 15) AS INTEGER)), '')
WHERE app = '' AND kind = 'executor_lost' AND dedup_key GLOB 'executor_lost:[0-9]*';
UPDATE alarm_event SET app = COALESCE((SELECT e.app FROM executor e WHERE e.id = CAST(substr(alarm_event.dedup_key, 23) AS INTEGER)), '')
WHERE app = '' AND kind = 'executor_lost' AND dedup_key GLOB 'executor_lost:restart:[0-9]*';

ALTER TABLE api_token ADD COLUMN parent_id BIGINT NULL;
CREATE INDEX idx_api_token_parent ON api_token (parent_id);

-- Case-insensitive user names: the oldest of users whose names differ only
-- in case keeps the name, each later one becomes <name>-<id> (audited as
-- user.rename); then the table is rebuilt with username COLLATE NOCASE, so
-- that the unique index, every comparison and the order ignore case as on
-- MySQL. The AUTOINCREMENT high-water mark moves with it: ids of deleted
-- users are not given again.
INSERT INTO audit_log (at, actor, action, object, detail, app, owner_id)
SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER), 'migration 0014', 'user.rename',
       'user/' || substr(b.username, 1, 40) || '-' || b.id,
       json_object('from', b.username, 'to', substr(b.username, 1, 40) || '-' || b.id,
                   'reason', 'user names became case-insensitive and an older user has the same name'),
       '', 0
FROM app_user b
WHERE EXISTS (SELECT 1 FROM app_user a WHERE lower(a.username) = lower(b.username) AND a.id < b.id);
UPDATE app_user SET username = substr(username, 1, 40) || '-' || id
WHERE EXISTS (SELECT 1 FROM app_user a WHERE lower(a.username) = lower(app_user.username) AND a.id < app_user.id);
CREATE TABLE app_user_nocase (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  username      VARCHAR(64)  NOT NULL COLLATE NOCASE,
  password_hash VARCHAR(255) NOT NULL,
  role          VARCHAR(16)  NOT NULL,
  created_at    BIGINT       NOT NULL,
  apps          VARCHAR(2000) NOT NULL DEFAULT ''
);
INSERT INTO app_user_nocase (id, username, password_hash, role, created_at, apps)
SELECT id, username, password_hash, role, created_at, apps FROM app_user;
DELETE FROM sqlite_sequence WHERE name = 'app_user_nocase';
INSERT INTO sqlite_sequence (name, seq) SELECT 'app_user_nocase', seq FROM sqlite_sequence WHERE name = 'app_user';
DROP TABLE app_user;
ALTER TABLE app_user_nocase RENAME TO app_user;
CREATE UNIQUE INDEX uk_user_name ON app_user (username);

-- migrate down
-- Users renamed by the up migration keep their new names.
CREATE TABLE app_user_case (
  id            INTEGER      PRIMARY KEY AUTOINCREMENT,
  username      VARCHAR(64)  NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  role          VARCHAR(16)  NOT NULL,
  created_at    BIGINT       NOT NULL,
  apps          VARCHAR(2000) NOT NULL DEFAULT ''
);
INSERT INTO app_user_case (id, username, password_hash, role, created_at, apps)
SELECT id, username, password_hash, role, created_at, apps FROM app_user;
DELETE FROM sqlite_sequence WHERE name = 'app_user_case';
INSERT INTO sqlite_sequence (name, seq) SELECT 'app_user_case', seq FROM sqlite_sequence WHERE name = 'app_user';
DROP TABLE app_user;
ALTER TABLE app_user_case RENAME TO app_user;
CREATE UNIQUE INDEX uk_user_name ON app_user (username);

DROP INDEX idx_api_token_parent;
ALTER TABLE api_token DROP COLUMN parent_id;
ALTER TABLE alarm_event DROP COLUMN app;
ALTER TABLE audit_log DROP COLUMN owner_id;
ALTER TABLE audit_log DROP COLUMN app;

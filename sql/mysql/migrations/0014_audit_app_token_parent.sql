-- migrate up
-- Authorisation data (issue 17): who may read which audit entries and
-- alarms, which token created which, and user names without case.
--
-- audit_log.app is the app of the object an entry is about (a job, a run,
-- an executor, a slot attempt); '' for entries about users, tokens and the
-- platform, which only admins read. audit_log.owner_id is the user whose
-- own account the entry is about (a login, a password change, one of their
-- API tokens created or revoked): that user reads it too; 0 for none.
ALTER TABLE audit_log ADD COLUMN app VARCHAR(64) NOT NULL DEFAULT '',
  ADD COLUMN owner_id BIGINT NOT NULL DEFAULT 0;

-- Existing entries: the app where the object still exists to say it, the
-- owner of tokens and of logins and password changes. Anything else stays
-- '' and 0: admins only. The REGEXP guards keep CAST from seeing anything
-- but digits (a truncation warning is an error in strict mode).
UPDATE audit_log a JOIN job j
  ON j.id = CASE WHEN a.object REGEXP '^job/[0-9]{1,18}$' THEN CAST(SUBSTRING(a.object, 5) AS UNSIGNED) END
SET a.app = j.app;
UPDATE audit_log a JOIN job_run r
  ON r.id = CASE WHEN a.object REGEXP '^run/[0-9]{1,18}$' THEN CAST(SUBSTRING(a.object, 5) AS UNSIGNED) END
SET a.app = r.app;
UPDATE audit_log a JOIN executor e
  ON e.id = CASE WHEN a.object REGEXP '^executor/[0-9]{1,18}$' THEN CAST(SUBSTRING(a.object, 10) AS UNSIGNED) END
SET a.app = e.app;
UPDATE audit_log a JOIN slot_attempt t
  ON t.id = CASE WHEN a.object REGEXP '^attempt/[0-9]{1,18}$' THEN CAST(SUBSTRING(a.object, 9) AS UNSIGNED) END
  JOIN job_run r ON r.id = t.run_id
SET a.app = r.app;
UPDATE audit_log a JOIN api_token t
  ON t.id = CASE WHEN a.object REGEXP '^token/[0-9]{1,18}$' THEN CAST(SUBSTRING(a.object, 7) AS UNSIGNED) END
SET a.owner_id = t.user_id;
UPDATE audit_log a JOIN app_user u ON u.username = a.actor AND u.created_at <= a.at
SET a.owner_id = u.id
WHERE a.action IN ('login', 'user.password');

-- alarm_event.app is the app of the job, run or executor an alarm is about;
-- '' for alarms about the platform (leader_change), which only users
-- without an app limit see. Existing alarms: from their job, else their
-- run, else (executor_lost) the executor named in the dedup key.
ALTER TABLE alarm_event ADD COLUMN app VARCHAR(64) NOT NULL DEFAULT '';
UPDATE alarm_event a JOIN job j ON j.id = a.job_id SET a.app = j.app;
UPDATE alarm_event a JOIN job_run r ON r.id = a.run_id SET a.app = r.app WHERE a.app = '';
UPDATE alarm_event a JOIN executor e
  ON e.id = CASE
    WHEN a.dedup_key REGEXP '^executor_lost:[0-9]{1,18}:' THEN CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(a.dedup_key, ':', 2), ':', -1) AS UNSIGNED)
    WHEN a.dedup_key REGEXP '^executor_lost:restart:[0-9]{1,18}:' THEN CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(a.dedup_key, ':', 3), ':', -1) AS UNSIGNED)
  END
SET a.app = e.app
WHERE a.app = '' AND a.kind = 'executor_lost';

-- api_token.parent_id is the token whose holder created this one; NULL when
-- it was created from a console session (or before this migration). A
-- token never outlives its parent: its expiry and role are capped by the
-- parent's, and revoking the parent revokes it (transitively).
ALTER TABLE api_token ADD COLUMN parent_id BIGINT NULL, ADD KEY idx_api_token_parent (parent_id);

-- User names are case-insensitive: 'Alice' and 'alice' are one user, and
-- logging in works with either spelling. A server whose default collation
-- is case-sensitive may hold both: the oldest keeps the name, each later
-- one becomes <name>-<id>, and the audit log says so (user.rename, admins).
INSERT INTO audit_log (at, actor, action, object, detail, app, owner_id)
SELECT CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED), 'migration 0014', 'user.rename',
       CONCAT('user/', LEFT(b.username, 40), '-', b.id),
       JSON_OBJECT('from', b.username, 'to', CONCAT(LEFT(b.username, 40), '-', b.id),
                   'reason', 'user names became case-insensitive and an older user has the same name'),
       '', 0
FROM app_user b
WHERE EXISTS (SELECT 1 FROM app_user a WHERE LOWER(a.username) = LOWER(b.username) AND a.id < b.id);
UPDATE app_user u JOIN (
  SELECT b.id FROM app_user b JOIN app_user a ON LOWER(a.username) = LOWER(b.username) AND a.id < b.id GROUP BY b.id
) d ON d.id = u.id
SET u.username = CONCAT(LEFT(u.username, 40), '-', u.id);
ALTER TABLE app_user MODIFY username VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci NOT NULL;

-- migrate down
-- Users renamed by the up migration keep their new names.
ALTER TABLE app_user MODIFY username VARCHAR(64) NOT NULL;
ALTER TABLE api_token DROP INDEX idx_api_token_parent, DROP COLUMN parent_id;
ALTER TABLE alarm_event DROP COLUMN app;
ALTER TABLE audit_log DROP COLUMN app, DROP COLUMN owner_id;

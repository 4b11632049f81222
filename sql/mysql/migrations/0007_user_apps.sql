-- migrate up
-- apps: the apps a user may see and act on, comma separated; '' = every
-- app. Admins always have every app.
ALTER TABLE app_user ADD COLUMN apps VARCHAR(2000) NOT NULL DEFAULT '';

-- migrate down
ALTER TABLE app_user DROP COLUMN apps;

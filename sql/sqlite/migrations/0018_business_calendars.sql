-- migrate up
-- Business calendars: see the MySQL migration of the same version.
CREATE TABLE business_calendar (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  app         TEXT    NOT NULL DEFAULT '',
  name        TEXT    NOT NULL,
  description TEXT    NOT NULL DEFAULT '',
  week        TEXT    NOT NULL,
  days        TEXT    NOT NULL,
  holidays    INTEGER NOT NULL DEFAULT 0,
  workdays    INTEGER NOT NULL DEFAULT 0,
  version     TEXT    NOT NULL,
  revision    INTEGER NOT NULL DEFAULT 1,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  updated_by  TEXT    NOT NULL DEFAULT '',
  UNIQUE (app, name)
);

-- migrate down
DROP TABLE business_calendar;

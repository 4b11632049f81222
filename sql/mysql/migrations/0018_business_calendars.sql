-- migrate up
-- Business calendars (admin/calendar): holidays and extra working days over
-- a base week, per app or global (app ''). days holds the canonical CSV of
-- the days (admin/calendar.FormatCSV), version its content hash (what a run
-- records), revision the optimistic lock of edits.
CREATE TABLE business_calendar (
  id          BIGINT AUTO_INCREMENT PRIMARY KEY,
  app         VARCHAR(64)  NOT NULL DEFAULT '',
  name        VARCHAR(64)  NOT NULL,
  description VARCHAR(1024) NOT NULL DEFAULT '',
  week        VARCHAR(32)  NOT NULL,
  days        MEDIUMTEXT   NOT NULL,
  holidays    INT          NOT NULL DEFAULT 0,
  workdays    INT          NOT NULL DEFAULT 0,
  version     VARCHAR(64)  NOT NULL,
  revision    BIGINT       NOT NULL DEFAULT 1,
  created_at  BIGINT       NOT NULL,
  updated_at  BIGINT       NOT NULL,
  updated_by  VARCHAR(64)  NOT NULL DEFAULT '',
  UNIQUE KEY uq_calendar_name (app, name)
) ENGINE=InnoDB;

-- migrate down
DROP TABLE business_calendar;

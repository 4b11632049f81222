-- migrate up
-- Dead letters: see the MySQL migration of the same version.
CREATE TABLE dead_letter (
  id            INTEGER  PRIMARY KEY AUTOINCREMENT,
  app           TEXT     NOT NULL,
  job_id        INTEGER  NOT NULL,
  job_name      TEXT     NOT NULL,
  handler       TEXT     NOT NULL,
  run_id        INTEGER  NOT NULL,
  scheduled_at  INTEGER  NOT NULL,
  slot          INTEGER  NOT NULL,
  token         INTEGER  NOT NULL,
  attempt       INTEGER  NOT NULL,
  params        TEXT     NOT NULL,
  slot_param    TEXT     NOT NULL,
  error         TEXT     NOT NULL,
  error_msg     TEXT     NOT NULL,
  error_class   TEXT     NOT NULL,
  processed     INTEGER  NOT NULL DEFAULT 0,
  skipped       INTEGER  NOT NULL DEFAULT 0,
  failed        INTEGER  NOT NULL DEFAULT 0,
  uncertain     INTEGER  NOT NULL DEFAULT 0,
  died_at       INTEGER  NOT NULL,
  replayed_at   INTEGER,
  replayed_by   TEXT     NOT NULL DEFAULT '',
  replay_token  INTEGER,
  replays       INTEGER  NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX uk_dead_token ON dead_letter (token);
CREATE INDEX idx_dead_app ON dead_letter (app, id);
CREATE INDEX idx_dead_job ON dead_letter (job_id, id);
CREATE INDEX idx_dead_handler ON dead_letter (handler, id);
CREATE INDEX idx_dead_class ON dead_letter (error_class, id);
CREATE INDEX idx_dead_died ON dead_letter (died_at, id);

-- The params a replay gave a slot of a run instead of the run's (every
-- later attempt of that slot in the run runs with them: retries, moves);
-- deleted with the run.
CREATE TABLE slot_replay_params (
  run_id  INTEGER  NOT NULL,
  slot    INTEGER NOT NULL,
  params  TEXT    NOT NULL,
  PRIMARY KEY (run_id, slot)
);

-- migrate down
DROP TABLE slot_replay_params;
DROP TABLE dead_letter;

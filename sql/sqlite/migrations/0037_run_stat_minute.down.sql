DROP INDEX idx_run_finished;
DROP INDEX idx_run_started;
DROP TABLE run_stat_cursor;
DROP TABLE run_stat_minute;

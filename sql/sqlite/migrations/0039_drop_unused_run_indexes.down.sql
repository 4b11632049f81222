CREATE INDEX idx_run_status_id ON job_run (status, id);
CREATE INDEX idx_run_app_id ON job_run (app, id);

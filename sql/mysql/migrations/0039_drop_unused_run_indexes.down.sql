ALTER TABLE job_run ADD INDEX idx_run_status_id (status, id), ADD INDEX idx_run_app_id (app, id);

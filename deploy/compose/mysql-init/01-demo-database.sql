-- Runs once, when the MySQL container initialises an empty data directory,
-- after the shardjob user and database were created from the environment.
-- shardjob_demo is the business database of the record-level demo handlers
-- (demo.ledger, demo.ledger-external): shard locks, dedup table, ledger.
CREATE DATABASE IF NOT EXISTS shardjob_demo;
GRANT ALL PRIVILEGES ON shardjob_demo.* TO 'shardjob'@'%';

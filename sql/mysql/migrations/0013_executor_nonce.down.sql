ALTER TABLE executor DROP INDEX idx_executor_address;
DROP TABLE executor_nonce;

ALTER TABLE slot_attempt DROP COLUMN accept_seq;

ALTER TABLE job DROP COLUMN time_zones;

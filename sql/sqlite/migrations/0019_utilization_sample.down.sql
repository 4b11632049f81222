DROP TABLE utilization_sample;

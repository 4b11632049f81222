DROP TABLE business_calendar;

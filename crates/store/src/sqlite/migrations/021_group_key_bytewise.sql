-- Group names compare by their bytes on PostgreSQL whatever its
-- collation (its migration 021); SQLite's default collation, BINARY,
-- already does.
SELECT 1;

-- Nothing changes here: PostgreSQL's insert statements count their own rows
-- since migration 014. The version keeps both stores' migrations in step
-- with SQLite's, whose writer now counts the tasks it inserts.
SELECT 1;

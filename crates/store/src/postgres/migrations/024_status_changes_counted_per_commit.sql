-- Nothing changes here: PostgreSQL's trigger still counts status changes.
-- The version keeps both stores' migrations in step with SQLite's, whose
-- writer now counts the status changes it makes.
SELECT 1;

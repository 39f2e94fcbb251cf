-- The count of attempts of a `task_dispatches` entry, as PostgreSQL keeps
-- it (its migration 022). SQLite leaves the table empty and counts the
-- attempts started in the server's memory; the column is here for the
-- statement both stores share.
ALTER TABLE task_dispatches ADD COLUMN n INTEGER NOT NULL DEFAULT 1;

-- The writer counts the tasks its writes insert, once per queue and commit
-- (src/sqlite/counts.rs), in the same transaction as the rows: the row
-- trigger it replaces ran a sub-program for every task inserted. Status
-- changes and deletes keep their triggers.
DROP TRIGGER IF EXISTS task_counts_insert;

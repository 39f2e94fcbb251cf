-- The statements that insert tasks count their own rows in task_counts
-- (tables/stats.rs, count_inserted!), in the same statement: the insert
-- trigger's transition table and function call were about a quarter of
-- PostgreSQL's CPU time for a one-row create. Updates and deletes are still
-- counted by their triggers. A node of an earlier version inserts without
-- counting once this has run, so every node is upgraded before it does.
DROP TRIGGER task_counts_insert ON tasks;
DROP FUNCTION idem_task_counts_insert();

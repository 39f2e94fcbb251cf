-- A queue is marked ordered by the statement that inserts its first task
-- with a group or a priority (`tables::queues::mark_ordered` and the
-- batcher's marking statements), as on SQLite. The row trigger of
-- migration 017 did it for every insert path, but an `AFTER` row trigger
-- on `tasks`, even one whose condition no create meets, made every
-- create queue a trigger event: 3 to 4 % of PostgreSQL's create rate.
DROP TRIGGER queue_ordered ON tasks;
DROP FUNCTION idem_queue_ordered();

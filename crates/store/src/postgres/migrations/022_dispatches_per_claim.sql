-- `task_dispatches` holds one entry per claim with the number of attempts
-- it started (`n`), written by the claim itself, which knows its queue
-- (tables/dispatch.rs, `SQL_LOG_DISPATCHED`). The trigger on `attempts`
-- this replaces looked up every attempt's task, twice, and wrote an entry
-- per attempt: two of a delivery's WAL records and about a quarter of
-- the claim's time in the database. Entries written before count one
-- each. `IF EXISTS`: a database brought back to an earlier version to run
-- the migrations again may have lost them.
ALTER TABLE task_dispatches ADD COLUMN n BIGINT NOT NULL DEFAULT 1;
DROP TRIGGER IF EXISTS task_dispatches_insert ON attempts;
DROP FUNCTION IF EXISTS idem_task_dispatches_insert();

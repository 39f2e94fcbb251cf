-- Due tasks of one queue in the order claims take them (schedule time,
-- then uid), so that a claim reads the rows it takes and no others, however
-- many are due: ordering by uid from an index without it meant reading and
-- sorting every due task of the queue. The attempt count stays in the
-- index, for counting the queue's scheduled tasks from it alone.
DROP INDEX tasks_due_by_queue;
CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at, uid, attempt_count)
    WHERE status = 'pending';

-- A claim's attempts find their tasks one by one through the uid index,
-- and each queue's entries older than a minute are dropped through the
-- queue's index range. The transition table has no statistics, so the
-- joins this replaces could be planned as scans of every task and of every
-- entry: each claim then cost time in proportion to those tables. A LATERAL
-- subquery with a LIMIT is never flattened into a join, and a DELETE with
-- one queue's values is a range of task_dispatches_by_queue.
CREATE OR REPLACE FUNCTION idem_task_dispatches_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    g record;
BEGIN
    INSERT INTO task_dispatches (org, queue, started_at)
    SELECT t.org, t.queue, a.started_at FROM idem_new a
    CROSS JOIN LATERAL (SELECT org, queue FROM tasks WHERE uid = a.task_uid LIMIT 1) t;
    FOR g IN
        SELECT t.org, t.queue, max(a.started_at) AS latest FROM idem_new a
        CROSS JOIN LATERAL (SELECT org, queue FROM tasks WHERE uid = a.task_uid LIMIT 1) t
        GROUP BY t.org, t.queue
    LOOP
        DELETE FROM task_dispatches
        WHERE org = g.org AND queue = g.queue AND started_at <= g.latest - 60000000;
    END LOOP;
    RETURN NULL;
END $$;

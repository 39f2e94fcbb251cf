-- Due tasks of one queue in the order claims take them (schedule time,
-- then uid), so that a claim reads the rows it takes and no others, however
-- many are due: ordering by uid from an index without it meant reading and
-- sorting every due task of the queue. The attempt count stays in the
-- index, for counting the queue's scheduled tasks from it alone.
DROP INDEX tasks_due_by_queue;
CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at, uid, attempt_count)
    WHERE status = 'pending';

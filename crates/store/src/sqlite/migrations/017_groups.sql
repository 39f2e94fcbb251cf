-- Groups, ordering and priority inside a queue (API.md §13).
--
-- A task's group ('' for none: one group for fairness, with no limit) and
-- priority never change after it is created. Due tasks are indexed by
-- group, then priority, then due time, so that a claim finds each group's
-- next tasks and the next group (a skip from one group key to the next)
-- without reading any other task; a queue whose tasks use neither is the
-- range ('', 0) of the same index, in due order, as before.
ALTER TABLE tasks ADD COLUMN group_key TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;

DROP INDEX tasks_due_by_queue;
CREATE INDEX tasks_due_by_queue
    ON tasks (org, queue, group_key, priority DESC, next_attempt_at, uid, attempt_count)
    WHERE status = 'pending';
DROP INDEX tasks_running;
CREATE INDEX tasks_running ON tasks (org, queue, group_key) WHERE status = 'running';

-- `ordered`: the queue has held a task with a group or a priority, so its
-- claims take turns among groups (set by the create of such a task, in its
-- transaction: `tables::queues::mark_ordered`). `group_cursor`: where the
-- next claim starts its turn.
ALTER TABLE queues ADD COLUMN ordered INTEGER NOT NULL DEFAULT 0;
ALTER TABLE queues ADD COLUMN group_cursor TEXT NOT NULL DEFAULT '';

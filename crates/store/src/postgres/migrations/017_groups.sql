-- Groups, ordering and priority inside a queue (API.md §13).
--
-- A task's group ('' for none: one group for fairness, with no limit) and
-- priority never change after it is created. Due tasks are indexed by
-- group, then priority, then due time, so that a claim finds each group's
-- next tasks and the next group (a skip from one group key to the next)
-- without reading any other task; a queue whose tasks use neither is the
-- range ('', 0) of the same index, in due order, as before.
ALTER TABLE tasks ADD COLUMN group_key TEXT NOT NULL DEFAULT '';
-- Two bytes: the priority widens every task's row and due index entry.
ALTER TABLE tasks ADD COLUMN priority SMALLINT NOT NULL DEFAULT 0;

DROP INDEX tasks_due_by_queue;
CREATE INDEX tasks_due_by_queue
    ON tasks (org, queue, group_key, priority DESC, next_attempt_at, uid, attempt_count)
    WHERE status = 'pending';
-- A group's running tasks are counted under its queue's lock by each claim.
DROP INDEX tasks_running;
CREATE INDEX tasks_running ON tasks (org, queue, group_key) WHERE status = 'running';

-- `ordered`: the queue has held a task with a group or a priority, so its
-- claims take turns among groups; a queue that never did keeps the plain
-- claim. `group_cursor`: the group the last claim ended on, where the next
-- one starts its turn.
ALTER TABLE queues ADD COLUMN ordered BIGINT NOT NULL DEFAULT 0;
ALTER TABLE queues ADD COLUMN group_cursor TEXT NOT NULL DEFAULT '';

CREATE FUNCTION idem_queue_ordered() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE queues SET ordered = 1 WHERE org = NEW.org AND name = NEW.queue AND ordered = 0;
    RETURN NULL;
END $$;
-- The condition is tested without calling the function: a create with
-- neither group nor priority pays nothing for it.
CREATE TRIGGER queue_ordered AFTER INSERT ON tasks
    FOR EACH ROW WHEN (NEW.group_key <> '' OR NEW.priority <> 0)
    EXECUTE FUNCTION idem_queue_ordered();

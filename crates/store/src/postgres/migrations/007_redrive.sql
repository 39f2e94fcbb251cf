-- Redrive: a failed or cancelled task runs again with a fresh retry budget
-- while its attempts keep their numbers; the budget counts the attempts
-- after this many.
ALTER TABLE tasks ADD COLUMN attempts_before_redrive BIGINT NOT NULL DEFAULT 0;
-- Task lists by state (and the tasks a bulk redrive takes), and by creation
-- time, each one index range of a queue rather than a scan of it.
CREATE INDEX tasks_by_state ON tasks (org, queue, status, task_id);
CREATE INDEX tasks_by_created ON tasks (org, queue, created_at, task_id);

-- Redrive: a failed or cancelled task runs again with a fresh retry budget
-- while its attempts keep their numbers; the budget counts the attempts
-- after this many.
ALTER TABLE tasks ADD COLUMN attempts_before_redrive INTEGER NOT NULL DEFAULT 0;
-- The failed and cancelled tasks of a queue in ID order: the tasks a bulk
-- redrive takes, and the console's lists of them, without a scan of the
-- queue. Partial, so that a create, a claim and a success add no entry:
-- a full index by status, and one by creation time, each halved
-- PostgreSQL's creates at 16 clients (every create and every status
-- change of a non-HOT update inserting into them).
CREATE INDEX tasks_failed ON tasks (org, queue, task_id) WHERE status = 'failed';
CREATE INDEX tasks_cancelled ON tasks (org, queue, task_id) WHERE status = 'cancelled';

-- Dispatch: each queue's token bucket lives on its row, so that every node
-- debits the same bucket; NULL tokens mean a full bucket.
ALTER TABLE queues ADD COLUMN dispatch_tokens DOUBLE PRECISION;
ALTER TABLE queues ADD COLUMN dispatch_refilled_at BIGINT;

CREATE UNIQUE INDEX tasks_by_uid ON tasks (uid);
-- Due tasks of one queue in schedule order, and the queue's running count.
CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at) WHERE status = 'pending';
CREATE INDEX tasks_running ON tasks (org, queue) WHERE status = 'running';
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'running';

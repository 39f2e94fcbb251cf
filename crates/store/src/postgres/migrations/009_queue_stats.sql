-- Queue statistics without scanning tasks.
--
-- task_counts holds how many tasks of a queue are in each stored status;
-- statement triggers keep it in the same transaction as every change of a
-- task's status, whichever statement makes it (creates, claims,
-- completions, cancels, purges, sweeps, deletes), with one upsert per
-- statement (a batch of creates adds one statement, not one per task).
-- A single row per queue and status would serialize every transaction
-- touching the queue's tasks, concurrent creates included, and two
-- transactions taking such rows in different orders would deadlock. So a
-- connection writes rows of its own (shard = its backend pid, unique among
-- live connections): no two transactions ever write the same counter row.
-- The sweeper folds those rows into shard 0 (skipping rows a transaction
-- holds), which keeps a queue to a few rows; readers sum the shards.
CREATE TABLE task_counts (
    org     TEXT NOT NULL,
    queue   TEXT NOT NULL,
    status  TEXT NOT NULL,
    shard   INTEGER NOT NULL,
    n       BIGINT NOT NULL,
    PRIMARY KEY (org, queue, status, shard)
);
INSERT INTO task_counts (org, queue, status, shard, n)
    SELECT org, queue, status, 0, count(*) FROM tasks GROUP BY org, queue, status;

CREATE FUNCTION idem_task_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (org, queue, status, shard, n)
        SELECT org, queue, status, pg_backend_pid(), count(*) FROM idem_new
        GROUP BY org, queue, status ORDER BY org, queue, status
        ON CONFLICT (org, queue, status, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN NULL;
END $$;

CREATE FUNCTION idem_task_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (org, queue, status, shard, n)
        SELECT org, queue, status, pg_backend_pid(), sum(d) FROM (
            SELECT org, queue, status, 1 AS d FROM idem_new
            UNION ALL SELECT org, queue, status, -1 FROM idem_old) x
        GROUP BY org, queue, status HAVING sum(d) <> 0 ORDER BY org, queue, status
        ON CONFLICT (org, queue, status, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN NULL;
END $$;

CREATE FUNCTION idem_task_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (org, queue, status, shard, n)
        SELECT org, queue, status, pg_backend_pid(), -count(*) FROM idem_old
        GROUP BY org, queue, status ORDER BY org, queue, status
        ON CONFLICT (org, queue, status, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    RETURN NULL;
END $$;

CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS idem_new
    FOR EACH STATEMENT EXECUTE FUNCTION idem_task_counts_insert();
CREATE TRIGGER task_counts_update AFTER UPDATE ON tasks
    REFERENCING OLD TABLE AS idem_old NEW TABLE AS idem_new
    FOR EACH STATEMENT EXECUTE FUNCTION idem_task_counts_update();
CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks
    REFERENCING OLD TABLE AS idem_old
    FOR EACH STATEMENT EXECUTE FUNCTION idem_task_counts_delete();

-- The attempts started per queue, kept for a minute: `dispatched_last_minute`
-- is a range of this index, bounded by the queue's dispatch rate. A claim's
-- attempts (one queue's, under its queue row lock) drop the queue's entries
-- older than a minute, so the table holds at most a minute of dispatches
-- per queue.
CREATE TABLE task_dispatches (
    org         TEXT NOT NULL,
    queue       TEXT NOT NULL,
    started_at  BIGINT NOT NULL
);
CREATE INDEX task_dispatches_by_queue ON task_dispatches (org, queue, started_at);

CREATE FUNCTION idem_task_dispatches_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH started AS (
        SELECT t.org, t.queue, a.started_at FROM idem_new a JOIN tasks t ON t.uid = a.task_uid
    ), logged AS (
        INSERT INTO task_dispatches (org, queue, started_at) SELECT org, queue, started_at FROM started
    )
    DELETE FROM task_dispatches d USING (
        SELECT org, queue, max(started_at) AS latest FROM started GROUP BY org, queue) s
    WHERE d.org = s.org AND d.queue = s.queue AND d.started_at <= s.latest - 60000000;
    RETURN NULL;
END $$;

CREATE TRIGGER task_dispatches_insert AFTER INSERT ON attempts
    REFERENCING NEW TABLE AS idem_new
    FOR EACH STATEMENT EXECUTE FUNCTION idem_task_dispatches_insert();

-- Due tasks of one queue in schedule order, now carrying the attempt count,
-- so that the queue's scheduled tasks (never attempted, due later) are
-- counted from the index alone.
DROP INDEX tasks_due_by_queue;
CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at, attempt_count)
    WHERE status = 'pending';

-- Queue statistics without scanning tasks.
--
-- task_counts holds how many tasks of a queue are in each stored status;
-- the triggers below keep it in the same transaction as every change of a
-- task's status, whichever statement makes it (creates, claims,
-- completions, cancels, purges, sweeps, deletes). Readers sum the rows of a
-- queue over `shard`: PostgreSQL gives each connection its own rows, SQLite
-- has one writer and one shard.
CREATE TABLE task_counts (
    org     TEXT NOT NULL,
    queue   TEXT NOT NULL,
    status  TEXT NOT NULL,
    shard   INTEGER NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (org, queue, status, shard)
);
INSERT INTO task_counts (org, queue, status, shard, n)
    SELECT org, queue, status, 0, count(*) FROM tasks GROUP BY org, queue, status;

CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (org, queue, status, shard, n)
        VALUES (NEW.org, NEW.queue, NEW.status, 0, 1)
        ON CONFLICT (org, queue, status, shard) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER task_counts_update AFTER UPDATE OF status ON tasks
WHEN OLD.status <> NEW.status BEGIN
    UPDATE task_counts SET n = n - 1
        WHERE org = OLD.org AND queue = OLD.queue AND status = OLD.status AND shard = 0;
    INSERT INTO task_counts (org, queue, status, shard, n)
        VALUES (NEW.org, NEW.queue, NEW.status, 0, 1)
        ON CONFLICT (org, queue, status, shard) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET n = n - 1
        WHERE org = OLD.org AND queue = OLD.queue AND status = OLD.status AND shard = 0;
END;

-- The attempts started per queue in the last minute, as PostgreSQL keeps
-- them. SQLite leaves the table empty: one process owns the file, so the
-- store counts them in memory (`sqlite/dispatched.rs`), which spares every
-- claim a trigger; the table is here for the statement both stores share.
CREATE TABLE task_dispatches (
    org         TEXT NOT NULL,
    queue       TEXT NOT NULL,
    started_at  INTEGER NOT NULL
);
CREATE INDEX task_dispatches_by_queue ON task_dispatches (org, queue, started_at);


-- Due tasks of one queue in schedule order, now carrying the attempt count,
-- so that the queue's scheduled tasks (never attempted, due later) are
-- counted from the index alone.
DROP INDEX tasks_due_by_queue;
CREATE INDEX tasks_due_by_queue ON tasks (org, queue, next_attempt_at, attempt_count)
    WHERE status = 'pending';

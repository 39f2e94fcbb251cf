-- Stored task bytes per organization (the tenant storage quota): task_counts
-- also sums the bytes of its tasks (their target and payload as created,
-- which never change), kept by the same triggers as the counts, so that an
-- organization's live tasks and stored bytes are a sum of its few counter
-- rows, never a scan of its tasks.
ALTER TABLE task_counts ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;

UPDATE task_counts SET bytes = (
    SELECT COALESCE(sum(octet_length(t.target) + COALESCE(octet_length(t.body), 0)), 0)
    FROM tasks t
    WHERE t.org = task_counts.org AND t.queue = task_counts.queue
      AND t.status = task_counts.status)
WHERE shard = 0;

DROP TRIGGER IF EXISTS task_counts_insert;
DROP TRIGGER IF EXISTS task_counts_update;
DROP TRIGGER IF EXISTS task_counts_delete;

CREATE TRIGGER task_counts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (org, queue, status, shard, n, bytes)
        VALUES (NEW.org, NEW.queue, NEW.status, 0, 1,
                octet_length(NEW.target) + COALESCE(octet_length(NEW.body), 0))
        ON CONFLICT (org, queue, status, shard)
        DO UPDATE SET n = n + 1, bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER task_counts_update AFTER UPDATE OF status ON tasks
WHEN OLD.status <> NEW.status BEGIN
    UPDATE task_counts
        SET n = n - 1, bytes = bytes - octet_length(OLD.target) - COALESCE(octet_length(OLD.body), 0)
        WHERE org = OLD.org AND queue = OLD.queue AND status = OLD.status AND shard = 0;
    INSERT INTO task_counts (org, queue, status, shard, n, bytes)
        VALUES (NEW.org, NEW.queue, NEW.status, 0, 1,
                octet_length(NEW.target) + COALESCE(octet_length(NEW.body), 0))
        ON CONFLICT (org, queue, status, shard)
        DO UPDATE SET n = n + 1, bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER task_counts_delete AFTER DELETE ON tasks BEGIN
    UPDATE task_counts
        SET n = n - 1, bytes = bytes - octet_length(OLD.target) - COALESCE(octet_length(OLD.body), 0)
        WHERE org = OLD.org AND queue = OLD.queue AND status = OLD.status AND shard = 0;
END;

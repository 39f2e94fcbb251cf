-- Stored task bytes per organization (the tenant storage quota): task_counts
-- also sums the bytes of its tasks (their target and payload as created,
-- which never change), kept by the same statements and triggers as the
-- counts, so that an organization's live tasks and stored bytes are a sum
-- of its few counter rows, never a scan of its tasks.
ALTER TABLE task_counts ADD COLUMN bytes BIGINT NOT NULL DEFAULT 0;

INSERT INTO task_counts AS c (org, queue, status, shard, n, bytes)
    SELECT org, queue, status, 0, 0,
           sum(octet_length(target) + COALESCE(octet_length(body), 0))
    FROM tasks GROUP BY org, queue, status ORDER BY org, queue, status
    ON CONFLICT (org, queue, status, shard) DO UPDATE SET bytes = c.bytes + EXCLUDED.bytes;

CREATE OR REPLACE FUNCTION idem_task_counts_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (org, queue, status, shard, n, bytes)
        SELECT org, queue, status, pg_backend_pid(), sum(d), sum(d * size) FROM (
            SELECT org, queue, status, 1 AS d,
                   octet_length(target) + COALESCE(octet_length(body), 0) AS size
            FROM idem_new
            UNION ALL SELECT org, queue, status, -1,
                   octet_length(target) + COALESCE(octet_length(body), 0)
            FROM idem_old) x
        GROUP BY org, queue, status HAVING sum(d) <> 0 ORDER BY org, queue, status
        ON CONFLICT (org, queue, status, shard)
        DO UPDATE SET n = c.n + EXCLUDED.n, bytes = c.bytes + EXCLUDED.bytes;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION idem_task_counts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_counts AS c (org, queue, status, shard, n, bytes)
        SELECT org, queue, status, pg_backend_pid(), -count(*),
               -sum(octet_length(target) + COALESCE(octet_length(body), 0))
        FROM idem_old
        GROUP BY org, queue, status ORDER BY org, queue, status
        ON CONFLICT (org, queue, status, shard)
        DO UPDATE SET n = c.n + EXCLUDED.n, bytes = c.bytes + EXCLUDED.bytes;
    RETURN NULL;
END $$;

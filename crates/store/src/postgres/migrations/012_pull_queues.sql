-- Pull queues (API.md §11). The mode is a column as well as part of the
-- configuration so that the dispatcher's claim can skip pull queues in SQL.
ALTER TABLE queues ADD COLUMN mode TEXT NOT NULL DEFAULT 'push';
-- A pull task's tag, the lease a worker holds (attempt_id is its token:
-- attempt numbers are reused when a claim is released), and what a
-- completion reported.
ALTER TABLE tasks ADD COLUMN tag TEXT;
ALTER TABLE tasks ADD COLUMN attempt_id TEXT;
ALTER TABLE tasks ADD COLUMN claimant TEXT;
ALTER TABLE tasks ADD COLUMN result TEXT;

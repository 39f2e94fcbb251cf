-- Cron jobs. A run is a task of the organization's '~jobs' queue whose
-- job, run_kind and header_style columns are set (see jobs.rs).
CREATE TABLE jobs (
    org                 TEXT NOT NULL,
    name                TEXT NOT NULL,
    schedule            TEXT NOT NULL,
    time_zone           TEXT NOT NULL,
    target              TEXT NOT NULL,
    body_form           TEXT,
    body                BLOB,
    attempt_deadline_s  INTEGER NOT NULL,
    retry_config        TEXT NOT NULL,
    catch_up            TEXT NOT NULL,
    header_style        TEXT NOT NULL,
    state               TEXT NOT NULL,
    -- The earliest instant that may fire: creation, last resume, last
    -- change of schedule or time zone.
    since               INTEGER NOT NULL,
    -- The latest scheduled instant fired; nothing at or before it fires again.
    last_fired_at       INTEGER,
    -- The next instant due; NULL while paused.
    next_run_at         INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    PRIMARY KEY (org, name)
);
CREATE INDEX jobs_due ON jobs (next_run_at) WHERE next_run_at IS NOT NULL;

ALTER TABLE tasks ADD COLUMN job TEXT;
ALTER TABLE tasks ADD COLUMN run_kind TEXT;
ALTER TABLE tasks ADD COLUMN header_style TEXT;
CREATE INDEX tasks_runs ON tasks (org, job, schedule_time) WHERE job IS NOT NULL;

-- Why the scheduler paused a job it could not fire (its stored schedule no
-- longer parses); cleared when the job is changed or resumed.
ALTER TABLE jobs ADD COLUMN paused_reason TEXT;

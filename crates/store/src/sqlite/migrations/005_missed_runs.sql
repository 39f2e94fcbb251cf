-- Runs created ahead of their instant and not yet attempted: the scheduler
-- looks among them for instants that were missed while every node was down.
CREATE INDEX tasks_runs_unattempted ON tasks (schedule_time)
    WHERE job IS NOT NULL AND status = 'pending' AND attempt_count = 0;

-- Nothing changes on SQLite: PostgreSQL's migration 014 replaced its
-- statement trigger counting inserted tasks, whose transition table was the
-- cost. SQLite's row trigger runs inside the writer's transaction at the
-- cost of one small statement. The number is kept so that both backends'
-- schema versions name the same step.
SELECT 1;

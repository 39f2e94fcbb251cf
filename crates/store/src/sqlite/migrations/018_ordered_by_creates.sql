-- PostgreSQL's creates now mark an ordered queue as SQLite's always did
-- (`tables::queues::mark_ordered`), and its trigger of migration 017 is
-- gone; SQLite never had one, so this is a no-op kept in step.
DROP TRIGGER IF EXISTS queue_ordered;

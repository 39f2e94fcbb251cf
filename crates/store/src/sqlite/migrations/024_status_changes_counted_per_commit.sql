-- The writer counts the status changes its writes make, once per queue,
-- status and commit (src/sqlite/counts.rs), in the same transaction as the
-- rows, as it has counted inserts since 023: the row trigger it replaces
-- ran two statements for every change, two changes per delivery. Deletes
-- keep their trigger.
DROP TRIGGER IF EXISTS task_counts_update;

-- The start of a target's answer to a failed attempt (content type, the
-- first 1 KiB of the body) as JSON: the attempt says why the target
-- refused, not only its status. Null for every other attempt.
ALTER TABLE attempts ADD COLUMN response TEXT;

-- An organization's event webhooks (see tables/events.rs).
CREATE TABLE webhooks (
    org         TEXT NOT NULL,
    id          TEXT NOT NULL,
    url         TEXT NOT NULL,
    -- The event types it receives, a JSON array.
    events      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (org, id)
);

-- The event types some webhook of the organization receives, space
-- separated, NULL for none: a completion reads it with the task's row, so
-- an organization without webhooks costs no statement to find out.
ALTER TABLE organizations ADD COLUMN webhook_events TEXT;

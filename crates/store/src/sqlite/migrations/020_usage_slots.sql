-- The slot column PostgreSQL spreads an organization's counts over
-- (tables/org_usage.rs). SQLite's one writer takes counts one at a time,
-- so every count stays in slot 0; the column keeps the statements that
-- give counts back the same on both stores.
CREATE TABLE org_usage_slots (
    org       TEXT NOT NULL,
    resource  TEXT NOT NULL,
    slot      INTEGER NOT NULL DEFAULT 0,
    n         INTEGER NOT NULL,
    PRIMARY KEY (org, resource, slot)
);
INSERT INTO org_usage_slots (org, resource, slot, n) SELECT org, resource, 0, n FROM org_usage;
DROP TABLE org_usage;
ALTER TABLE org_usage_slots RENAME TO org_usage;

-- An organization's count of a resource is spread over slots, one row
-- each (tables/org_usage.rs): a creation takes one in its connection's
-- slot and checks the sum, so creations of one organization's resource
-- no longer wait for each other's commits on one row. Existing counts
-- become slot 0.
ALTER TABLE org_usage ADD COLUMN slot INTEGER NOT NULL DEFAULT 0;
ALTER TABLE org_usage DROP CONSTRAINT org_usage_pkey;
ALTER TABLE org_usage ADD PRIMARY KEY (org, resource, slot);

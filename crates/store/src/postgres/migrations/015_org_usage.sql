-- How many of each resource a quota limits an organization holds
-- (tables/mod.rs, within_quota): a creation checks its quota against this
-- row and takes one in the same statement, and every deletion gives back
-- what it removed, in its own transaction, so a check costs the same
-- whatever the organization's size. Counts follow the definitions the
-- quotas always had: the job and event queues are Idem's, not queues.
-- Nodes of an earlier build writing to the same database do not keep it.
CREATE TABLE org_usage (
    org       TEXT NOT NULL,
    resource  TEXT NOT NULL,
    n         BIGINT NOT NULL,
    PRIMARY KEY (org, resource)
);
INSERT INTO org_usage (org, resource, n)
    SELECT org, 'queues', count(*) FROM queues WHERE name NOT IN ('~jobs', '~events') GROUP BY org
    UNION ALL SELECT org, 'jobs', count(*) FROM jobs GROUP BY org
    UNION ALL SELECT org, 'principals', count(*) FROM principals GROUP BY org
    UNION ALL SELECT org, 'api_keys', count(*) FROM api_keys GROUP BY org
    UNION ALL SELECT org, 'signing_secrets', count(*) FROM signing_secrets GROUP BY org
    UNION ALL SELECT org, 'webhooks', count(*) FROM webhooks GROUP BY org;

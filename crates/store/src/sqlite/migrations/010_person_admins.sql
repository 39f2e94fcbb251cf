-- The first admin of every organization (the principal `admin`, which the
-- bootstrap and organization creation make) is a person: operations only a
-- person may take refuse services, and an organization must keep an admin
-- who is a person and holds a key.
UPDATE principals SET kind = 'person' WHERE name = 'admin';

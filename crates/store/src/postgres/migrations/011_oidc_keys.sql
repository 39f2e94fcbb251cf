-- Organizations' keys for the OIDC ID tokens sent to targets
-- (tables/oidc_keys.rs). The private key is PKCS#8 DER in base64, kept as
-- the signing secrets are: the database is trusted with both.
CREATE TABLE oidc_keys (
    org          TEXT NOT NULL,
    kid          TEXT NOT NULL,
    algorithm    TEXT NOT NULL,
    private_key  TEXT NOT NULL,
    public_jwk   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (org, kid)
);
-- The JWKS reads every organization's keys younger than its horizon.
CREATE INDEX oidc_keys_by_age ON oidc_keys (created_at);

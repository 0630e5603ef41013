-- OAuth 2.1: the built-in authorization server's clients, codes, grants
-- (token families) and tokens. Codes and tokens are stored as the
-- SHA-256 of their secret; the claims (a code's use, a refresh token's
-- rotation) are single conditional UPDATEs on those rows.
CREATE TABLE oauth_clients (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL DEFAULT '',
    document   TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE oauth_grants (
    id           TEXT PRIMARY KEY,
    client_id    TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    resource     TEXT NOT NULL,
    scopes       TEXT NOT NULL DEFAULT '[]',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT,
    revoked_at   BIGINT
);
CREATE INDEX oauth_grants_user ON oauth_grants (user_id, client_id);

CREATE TABLE oauth_codes (
    hash         BYTEA PRIMARY KEY,
    client_id    TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    user_id      TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    redirect_uri TEXT NOT NULL,
    resource     TEXT NOT NULL,
    challenge    TEXT NOT NULL,
    scopes       TEXT NOT NULL DEFAULT '[]',
    grant_id     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    used_at      BIGINT
);

CREATE TABLE oauth_tokens (
    hash       BYTEA PRIMARY KEY,
    grant_id   TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);

-- The web console: browser sessions, one-time login links, named keys
-- with their last use, rejection reasons, and the indexes of its two
-- long lists.
--
-- Sessions and login links are looked up by the SHA-256 of their secret
-- (unique); a user's sessions by user (sign-out everywhere). A session
-- signed in with an API key names it.
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    hash       BYTEA NOT NULL UNIQUE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_id     TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
    scopes     TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_key ON sessions (key_id);

CREATE TABLE login_links (
    id         TEXT PRIMARY KEY,
    hash       BYTEA NOT NULL UNIQUE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    used_at    BIGINT
);
CREATE INDEX login_links_user ON login_links (user_id);

ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at BIGINT;

ALTER TABLE proposals ADD COLUMN reason TEXT NOT NULL DEFAULT '';

-- Members and sign-in are found by user name.
CREATE INDEX users_name ON users (name, created_at);

-- The review queue reads a world's proposals of one status newest first,
-- one world after another (sqlstore/console.go), each a seek to its first
-- row: (world_id, status, created_at, id). The kind, actor and key
-- filters are evaluated on the index entries (the trailing columns).
-- It serves proposals_world_status's lookups (and the foreign key's
-- ON DELETE CASCADE), which goes.
DROP INDEX proposals_world_status;
CREATE INDEX proposals_review ON proposals (world_id, status, created_at, id, kind, actor_id, key_id);

-- The audit page reads newest first by seq, from the viewer's own rows
-- and each of their worlds' rows: an actor's or a world's rows in seq
-- order. The indexes on actor_id and world_id alone gain seq.
DROP INDEX audit_log_actor;
CREATE INDEX audit_log_actor ON audit_log (actor_id, seq);
DROP INDEX audit_log_world;
CREATE INDEX audit_log_world ON audit_log (world_id, seq);

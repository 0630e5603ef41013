-- WorldForge schema, SQLite dialect. Timestamps are unix milliseconds
-- (BIGINT), JSON documents are TEXT, booleans are INTEGER 0/1.

CREATE TABLE users (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    hash       BLOB NOT NULL UNIQUE,
    prefix     TEXT NOT NULL DEFAULT '',
    scopes     TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    value      BLOB NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE worlds (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users (id),
    name       TEXT NOT NULL,
    template   TEXT NOT NULL DEFAULT '',
    seed       BIGINT NOT NULL DEFAULT 0,
    grid_cols  INTEGER NOT NULL DEFAULT 0,
    grid_rows  INTEGER NOT NULL DEFAULT 0,
    doc        TEXT,
    version    BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX worlds_owner ON worlds (owner_id);

CREATE TABLE world_members (
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       TEXT NOT NULL CHECK (role IN ('gm', 'player', 'observer')),
    created_at BIGINT NOT NULL,
    PRIMARY KEY (world_id, user_id)
);
CREATE INDEX world_members_user ON world_members (user_id, role);

CREATE TABLE campaigns (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users (id),
    world_id   TEXT REFERENCES worlds (id) ON DELETE SET NULL,
    name       TEXT NOT NULL,
    doc        TEXT,
    version    BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX campaigns_owner ON campaigns (owner_id, updated_at);

CREATE TABLE quests (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    campaign_id TEXT REFERENCES campaigns (id) ON DELETE SET NULL,
    world_id    TEXT REFERENCES worlds (id) ON DELETE SET NULL,
    name        TEXT NOT NULL,
    doc         TEXT,
    version     BIGINT NOT NULL DEFAULT 1,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX quests_owner ON quests (owner_id, updated_at);
CREATE INDEX quests_campaign ON quests (campaign_id);

CREATE TABLE encounters (
    id          TEXT PRIMARY KEY,
    owner_id    TEXT NOT NULL REFERENCES users (id),
    campaign_id TEXT REFERENCES campaigns (id) ON DELETE SET NULL,
    world_id    TEXT REFERENCES worlds (id) ON DELETE SET NULL,
    name        TEXT NOT NULL,
    doc         TEXT,
    version     BIGINT NOT NULL DEFAULT 1,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);
CREATE INDEX encounters_owner ON encounters (owner_id, updated_at);
CREATE INDEX encounters_campaign ON encounters (campaign_id);

CREATE TABLE wiki_pages (
    id         TEXT PRIMARY KEY,
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    title      TEXT NOT NULL,
    body       TEXT NOT NULL DEFAULT '',
    kind       TEXT NOT NULL,
    audience   TEXT NOT NULL,
    version    BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    deleted_at BIGINT
);
CREATE INDEX wiki_pages_world ON wiki_pages (world_id, kind);

CREATE TABLE wiki_revisions (
    page_id      TEXT NOT NULL REFERENCES wiki_pages (id) ON DELETE CASCADE,
    version      BIGINT NOT NULL,
    title        TEXT NOT NULL,
    body         TEXT NOT NULL DEFAULT '',
    kind         TEXT NOT NULL,
    audience     TEXT NOT NULL,
    author_id    TEXT,
    diff_summary TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (page_id, version)
);

CREATE TABLE atlas_nodes (
    id           TEXT PRIMARY KEY,
    world_id     TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    parent_id    TEXT REFERENCES atlas_nodes (id) ON DELETE SET NULL,
    name         TEXT NOT NULL,
    level        INTEGER NOT NULL,
    terrain_type TEXT NOT NULL DEFAULT '',
    doc          TEXT,
    version      BIGINT NOT NULL DEFAULT 1,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE INDEX atlas_nodes_world ON atlas_nodes (world_id, level);
CREATE INDEX atlas_nodes_parent ON atlas_nodes (parent_id);

CREATE TABLE pois (
    id         TEXT PRIMARY KEY,
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    category   TEXT NOT NULL DEFAULT '',
    tags       TEXT NOT NULL DEFAULT '[]',
    x          BIGINT NOT NULL,
    y          BIGINT NOT NULL,
    items      TEXT NOT NULL DEFAULT '[]',
    pickable   INTEGER NOT NULL DEFAULT 0,
    openable   INTEGER NOT NULL DEFAULT 0,
    visibility TEXT NOT NULL DEFAULT 'gm',
    version    BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL
);
CREATE INDEX pois_world_xy ON pois (world_id, x, y);
CREATE INDEX pois_world_category ON pois (world_id, category);

CREATE TABLE lore_entities (
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    collection TEXT NOT NULL,
    id         TEXT NOT NULL,
    name       TEXT NOT NULL DEFAULT '',
    doc        TEXT,
    version    BIGINT NOT NULL DEFAULT 1,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (world_id, collection, id)
);

CREATE TABLE presence (
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    x          BIGINT NOT NULL,
    y          BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (world_id, user_id)
);

CREATE TABLE inventory (
    world_id  TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    user_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    item_id   TEXT NOT NULL,
    poi_id    TEXT NOT NULL,
    name      TEXT NOT NULL DEFAULT '',
    picked_at BIGINT NOT NULL,
    PRIMARY KEY (world_id, user_id, item_id),
    UNIQUE (world_id, item_id)
);

CREATE TABLE opened_pois (
    world_id  TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    poi_id    TEXT NOT NULL,
    opened_by TEXT,
    opened_at BIGINT NOT NULL,
    PRIMARY KEY (world_id, poi_id)
);

CREATE TABLE changesets (
    id         TEXT PRIMARY KEY,
    world_id   TEXT REFERENCES worlds (id) ON DELETE CASCADE,
    created_by TEXT NOT NULL,
    status     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE proposals (
    id           TEXT PRIMARY KEY,
    world_id     TEXT REFERENCES worlds (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    target_id    TEXT,
    base_version BIGINT NOT NULL DEFAULT 0,
    payload      TEXT NOT NULL,
    diff_summary TEXT NOT NULL DEFAULT '',
    changeset_id TEXT,
    status       TEXT NOT NULL,
    actor_id     TEXT NOT NULL,
    key_id       TEXT,
    created_at   BIGINT NOT NULL,
    decided_at   BIGINT,
    decided_by   TEXT
);
CREATE INDEX proposals_world_status ON proposals (world_id, status);
CREATE INDEX proposals_changeset ON proposals (changeset_id);
CREATE INDEX proposals_actor ON proposals (actor_id, created_at);

CREATE TABLE auto_accept_rules (
    id         TEXT PRIMARY KEY,
    owner_id   TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    world_id   TEXT REFERENCES worlds (id) ON DELETE CASCADE,
    actor_id   TEXT,
    key_id     TEXT,
    kinds      TEXT NOT NULL DEFAULT '[]',
    created_at BIGINT NOT NULL
);
CREATE INDEX auto_accept_rules_owner ON auto_accept_rules (owner_id);

CREATE TABLE audit_log (
    seq         INTEGER PRIMARY KEY, -- the rowid: insertion order
    id          TEXT NOT NULL, -- random, made by the server: unique by construction, not indexed (an index on random keys costs a page write per row)
    actor_id    TEXT NOT NULL,
    key_id      TEXT,
    tool        TEXT,
    route       TEXT,
    target_type TEXT,
    target_id   TEXT,
    world_id    TEXT,
    outcome     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX audit_log_actor ON audit_log (actor_id);
CREATE INDEX audit_log_world ON audit_log (world_id);

-- Lore integrity facts. list_lore finds a world's integrity
-- issues by reading the issues themselves through partial indexes, instead
-- of reading and validating every document of the world on every call:
-- what an issue depends on is worked out when an entity is written, and
-- what one entity's write changes for others is kept up to date by the
-- triggers below, in the writing transaction. (The store takes the world's
-- row lock before writing lore, so that two transactions never miss each
-- other's entities.)
--
-- Each entity keeps what engine/lore.Analyze says of it: why it is invalid
-- (invalid_reason, NULL when valid), its folded name (name_key), an era's
-- bounds (era_start, era_end), an event's era and year (event_era,
-- event_year) and whether that year is outside the era (event_outside),
-- with the lore.FactsVersion it was analysed under and the entity version
-- the facts describe (facts_for). Rows whose facts_for is not their version
-- (written before this migration, or by an older binary) or whose
-- facts_version is older are analysed again by the store: when it opens,
-- and for one world before listing that world's issues.
--
-- lore_refs holds the references of each valid entity, one row per
-- reference, with its state: 0 resolved, 1 dangling, 2 a self reference.
-- lore_names counts the entities of each (world, collection, folded name).
--
-- Lore ids, collections and folded names compare bytewise (COLLATE "C"),
-- as in SQLite and in Go, whatever the database's locale: pages of a
-- collection come in the same id order on both engines, and the smallest
-- id of a duplicate name is the one engine/lore picks.

ALTER TABLE lore_entities
    ALTER COLUMN collection TYPE TEXT COLLATE "C",
    ALTER COLUMN id TYPE TEXT COLLATE "C",
    ADD COLUMN name_key TEXT COLLATE "C",
    ADD COLUMN invalid_reason TEXT,
    ADD COLUMN event_era TEXT COLLATE "C",
    ADD COLUMN event_year BIGINT,
    ADD COLUMN event_outside INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN era_start BIGINT,
    ADD COLUMN era_end BIGINT,
    ADD COLUMN facts_version INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN facts_for BIGINT;

CREATE TABLE lore_refs (
    world_id       TEXT NOT NULL,
    collection     TEXT COLLATE "C" NOT NULL,
    id             TEXT COLLATE "C" NOT NULL,
    field          TEXT COLLATE "C" NOT NULL,
    pos            INTEGER NOT NULL,
    ref_collection TEXT COLLATE "C" NOT NULL,
    ref_id         TEXT COLLATE "C" NOT NULL,
    state          INTEGER NOT NULL,
    PRIMARY KEY (world_id, collection, id, field, pos),
    FOREIGN KEY (world_id, collection, id) REFERENCES lore_entities (world_id, collection, id) ON DELETE CASCADE
);
CREATE INDEX lore_refs_target ON lore_refs (world_id, ref_collection, ref_id);
CREATE INDEX lore_refs_broken ON lore_refs (world_id, collection, id, field, pos) WHERE state <> 0;

CREATE TABLE lore_names (
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    collection TEXT COLLATE "C" NOT NULL,
    name_key   TEXT COLLATE "C" NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (world_id, collection, name_key)
);
CREATE INDEX lore_names_shared ON lore_names (world_id, collection, name_key) WHERE n > 1;

-- (Partial, so that it is never a candidate for a lookup by primary key:
-- with no statistics yet, the planner could not tell them apart.)
CREATE INDEX lore_entities_name_key ON lore_entities (world_id, collection, name_key, id) WHERE name_key IS NOT NULL;
CREATE INDEX lore_entities_event_era ON lore_entities (world_id, event_era) WHERE event_era IS NOT NULL;
-- The issues of one kind each: only the entities that have one are indexed.
CREATE INDEX lore_entities_invalid ON lore_entities (world_id, collection, id) WHERE invalid_reason IS NOT NULL;
CREATE INDEX lore_entities_era_order ON lore_entities (world_id, collection, id) WHERE era_start > era_end;
CREATE INDEX lore_entities_outside ON lore_entities (world_id, collection, id) WHERE event_outside <> 0;
-- Entities to analyse again.
CREATE INDEX lore_entities_facts ON lore_entities (facts_version, world_id, collection, id);
CREATE INDEX lore_entities_stale ON lore_entities (world_id) WHERE facts_for IS DISTINCT FROM version;

-- A new entity resolves the references to it and joins its name's group;
-- a new era places the events that name it.
CREATE FUNCTION lore_entities_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lore_refs SET state = 0
        WHERE world_id = NEW.world_id AND ref_collection = NEW.collection AND ref_id = NEW.id AND state = 1;
    IF NEW.name_key IS NOT NULL THEN
        INSERT INTO lore_names (world_id, collection, name_key, n) VALUES (NEW.world_id, NEW.collection, NEW.name_key, 1)
            ON CONFLICT (world_id, collection, name_key) DO UPDATE SET n = lore_names.n + 1;
    END IF;
    IF NEW.collection = 'eras' THEN
        UPDATE lore_entities SET event_outside = CASE WHEN event_year < NEW.era_start OR event_year > NEW.era_end THEN 1 ELSE 0 END
            WHERE world_id = NEW.world_id AND event_era = NEW.id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER lore_entities_inserted AFTER INSERT ON lore_entities
    FOR EACH ROW EXECUTE FUNCTION lore_entities_inserted();

-- A deleted entity leaves the references to it dangling and leaves its
-- name's group; events of a deleted era are in no era.
CREATE FUNCTION lore_entities_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE lore_refs SET state = 1
        WHERE world_id = OLD.world_id AND ref_collection = OLD.collection AND ref_id = OLD.id AND state = 0;
    IF OLD.name_key IS NOT NULL THEN
        UPDATE lore_names SET n = n - 1
            WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key;
        DELETE FROM lore_names
            WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key AND n <= 0;
    END IF;
    IF OLD.collection = 'eras' THEN
        UPDATE lore_entities SET event_outside = 0
            WHERE world_id = OLD.world_id AND event_era = OLD.id AND event_outside <> 0;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER lore_entities_deleted AFTER DELETE ON lore_entities
    FOR EACH ROW EXECUTE FUNCTION lore_entities_deleted();

-- A renamed entity moves between name groups; an era's new bounds place
-- its events again.
CREATE FUNCTION lore_entities_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.name_key IS DISTINCT FROM NEW.name_key THEN
        IF OLD.name_key IS NOT NULL THEN
            UPDATE lore_names SET n = n - 1
                WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key;
            DELETE FROM lore_names
                WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key AND n <= 0;
        END IF;
        IF NEW.name_key IS NOT NULL THEN
            INSERT INTO lore_names (world_id, collection, name_key, n) VALUES (NEW.world_id, NEW.collection, NEW.name_key, 1)
                ON CONFLICT (world_id, collection, name_key) DO UPDATE SET n = lore_names.n + 1;
        END IF;
    END IF;
    IF NEW.collection = 'eras' AND (OLD.era_start IS DISTINCT FROM NEW.era_start OR OLD.era_end IS DISTINCT FROM NEW.era_end) THEN
        UPDATE lore_entities SET event_outside = CASE WHEN event_year < NEW.era_start OR event_year > NEW.era_end THEN 1 ELSE 0 END
            WHERE world_id = NEW.world_id AND event_era = NEW.id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER lore_entities_updated AFTER UPDATE OF name_key, era_start, era_end ON lore_entities
    FOR EACH ROW EXECUTE FUNCTION lore_entities_updated();

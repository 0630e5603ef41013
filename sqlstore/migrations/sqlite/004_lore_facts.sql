-- Lore integrity facts. list_lore finds a world's integrity
-- issues by reading the issues themselves through partial indexes, instead
-- of reading and validating every document of the world on every call:
-- what an issue depends on is worked out when an entity is written, and
-- what one entity's write changes for others is kept up to date by the
-- triggers below, in the writing transaction.
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
-- (The triggers insert a missing group row with INSERT … WHERE NOT
-- EXISTS, not INSERT OR IGNORE: inside a trigger the conflict policy of the
-- statement that fired it wins, and an upsert's is ABORT.)

ALTER TABLE lore_entities ADD COLUMN name_key TEXT;
ALTER TABLE lore_entities ADD COLUMN invalid_reason TEXT;
ALTER TABLE lore_entities ADD COLUMN event_era TEXT;
ALTER TABLE lore_entities ADD COLUMN event_year BIGINT;
ALTER TABLE lore_entities ADD COLUMN event_outside INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lore_entities ADD COLUMN era_start BIGINT;
ALTER TABLE lore_entities ADD COLUMN era_end BIGINT;
ALTER TABLE lore_entities ADD COLUMN facts_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE lore_entities ADD COLUMN facts_for BIGINT;

CREATE TABLE lore_refs (
    world_id       TEXT NOT NULL,
    collection     TEXT NOT NULL,
    id             TEXT NOT NULL,
    field          TEXT NOT NULL,
    pos            INTEGER NOT NULL,
    ref_collection TEXT NOT NULL,
    ref_id         TEXT NOT NULL,
    state          INTEGER NOT NULL,
    PRIMARY KEY (world_id, collection, id, field, pos),
    FOREIGN KEY (world_id, collection, id) REFERENCES lore_entities (world_id, collection, id) ON DELETE CASCADE
);
CREATE INDEX lore_refs_target ON lore_refs (world_id, ref_collection, ref_id);
CREATE INDEX lore_refs_broken ON lore_refs (world_id, collection, id, field, pos) WHERE state <> 0;

CREATE TABLE lore_names (
    world_id   TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    collection TEXT NOT NULL,
    name_key   TEXT NOT NULL,
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
CREATE INDEX lore_entities_stale ON lore_entities (world_id) WHERE facts_for IS NOT version;

-- A new entity resolves the references to it and joins its name's group;
-- a new era places the events that name it.
CREATE TRIGGER lore_entities_inserted AFTER INSERT ON lore_entities BEGIN
    UPDATE lore_refs SET state = 0
        WHERE world_id = NEW.world_id AND ref_collection = NEW.collection AND ref_id = NEW.id AND state = 1;
    INSERT INTO lore_names (world_id, collection, name_key, n)
        SELECT NEW.world_id, NEW.collection, NEW.name_key, 0 WHERE NEW.name_key IS NOT NULL AND NOT EXISTS
            (SELECT 1 FROM lore_names WHERE world_id = NEW.world_id AND collection = NEW.collection AND name_key = NEW.name_key);
    UPDATE lore_names SET n = n + 1
        WHERE world_id = NEW.world_id AND collection = NEW.collection AND name_key = NEW.name_key;
    UPDATE lore_entities SET event_outside = CASE WHEN event_year < NEW.era_start OR event_year > NEW.era_end THEN 1 ELSE 0 END
        WHERE NEW.collection = 'eras' AND world_id = NEW.world_id AND event_era = NEW.id;
END;

-- A deleted entity leaves the references to it dangling and leaves its
-- name's group; events of a deleted era are in no era.
CREATE TRIGGER lore_entities_deleted AFTER DELETE ON lore_entities BEGIN
    UPDATE lore_refs SET state = 1
        WHERE world_id = OLD.world_id AND ref_collection = OLD.collection AND ref_id = OLD.id AND state = 0;
    UPDATE lore_names SET n = n - 1
        WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key;
    DELETE FROM lore_names
        WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key AND n <= 0;
    UPDATE lore_entities SET event_outside = 0
        WHERE OLD.collection = 'eras' AND world_id = OLD.world_id AND event_era = OLD.id AND event_outside <> 0;
END;

-- A renamed entity moves between name groups.
CREATE TRIGGER lore_entities_renamed AFTER UPDATE OF name_key ON lore_entities
WHEN OLD.name_key IS NOT NEW.name_key BEGIN
    UPDATE lore_names SET n = n - 1
        WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key;
    DELETE FROM lore_names
        WHERE world_id = OLD.world_id AND collection = OLD.collection AND name_key = OLD.name_key AND n <= 0;
    INSERT INTO lore_names (world_id, collection, name_key, n)
        SELECT NEW.world_id, NEW.collection, NEW.name_key, 0 WHERE NEW.name_key IS NOT NULL AND NOT EXISTS
            (SELECT 1 FROM lore_names WHERE world_id = NEW.world_id AND collection = NEW.collection AND name_key = NEW.name_key);
    UPDATE lore_names SET n = n + 1
        WHERE world_id = NEW.world_id AND collection = NEW.collection AND name_key = NEW.name_key;
END;

-- An era's new bounds place its events again.
CREATE TRIGGER lore_entities_era_moved AFTER UPDATE OF era_start, era_end ON lore_entities
WHEN NEW.collection = 'eras' AND (OLD.era_start IS NOT NEW.era_start OR OLD.era_end IS NOT NEW.era_end) BEGIN
    UPDATE lore_entities SET event_outside = CASE WHEN event_year < NEW.era_start OR event_year > NEW.era_end THEN 1 ELSE 0 END
        WHERE world_id = NEW.world_id AND event_era = NEW.id;
END;

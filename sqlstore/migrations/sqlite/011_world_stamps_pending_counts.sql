-- A world's stamp: a number that changes whenever what read_world
-- answers for the world changes (its row, presence, opened POIs or
-- inventory), written by triggers so that no writer, in this process or
-- another on the same file, can forget it. Stamps come from one counter
-- for the whole database, so a world never has the same stamp twice.
-- A reader that kept an answer with its stamp can check it with one
-- primary-key read instead of reading the world again.
CREATE TABLE world_stamp_counter (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
);
INSERT INTO world_stamp_counter (id, n) VALUES (1, 1);

CREATE TABLE world_stamps (
    world_id TEXT PRIMARY KEY,
    stamp    INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO world_stamps (world_id, stamp) SELECT id, 1 FROM worlds;

CREATE TRIGGER worlds_stamp_insert AFTER INSERT ON worlds BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER worlds_stamp_update AFTER UPDATE ON worlds BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
    INSERT INTO world_stamps (world_id, stamp) SELECT OLD.id, n FROM world_stamp_counter WHERE OLD.id <> NEW.id
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER worlds_stamp_delete AFTER DELETE ON worlds BEGIN
    DELETE FROM world_stamps WHERE world_id = OLD.id;
END;

CREATE TRIGGER presence_stamp_insert AFTER INSERT ON presence BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.world_id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER presence_stamp_update AFTER UPDATE ON presence BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.world_id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
    INSERT INTO world_stamps (world_id, stamp) SELECT OLD.world_id, n FROM world_stamp_counter WHERE OLD.world_id <> NEW.world_id
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER presence_stamp_delete AFTER DELETE ON presence BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    UPDATE world_stamps SET stamp = (SELECT n FROM world_stamp_counter) WHERE world_id = OLD.world_id;
END;

CREATE TRIGGER opened_pois_stamp_insert AFTER INSERT ON opened_pois BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.world_id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER opened_pois_stamp_update AFTER UPDATE ON opened_pois BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.world_id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
    INSERT INTO world_stamps (world_id, stamp) SELECT OLD.world_id, n FROM world_stamp_counter WHERE OLD.world_id <> NEW.world_id
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER opened_pois_stamp_delete AFTER DELETE ON opened_pois BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    UPDATE world_stamps SET stamp = (SELECT n FROM world_stamp_counter) WHERE world_id = OLD.world_id;
END;

CREATE TRIGGER inventory_stamp_insert AFTER INSERT ON inventory BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.world_id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER inventory_stamp_update AFTER UPDATE ON inventory BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    INSERT INTO world_stamps (world_id, stamp) SELECT NEW.world_id, n FROM world_stamp_counter WHERE true
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
    INSERT INTO world_stamps (world_id, stamp) SELECT OLD.world_id, n FROM world_stamp_counter WHERE OLD.world_id <> NEW.world_id
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
END;
CREATE TRIGGER inventory_stamp_delete AFTER DELETE ON inventory BEGIN
    UPDATE world_stamp_counter SET n = n + 1;
    UPDATE world_stamps SET stamp = (SELECT n FROM world_stamp_counter) WHERE world_id = OLD.world_id;
END;

-- Each proposer's pending proposals, counted by triggers on proposals, so
-- that the quota check at filing reads one row instead of counting the
-- proposer's proposals (a walk of all of them, decided ones included).
CREATE TABLE pending_proposal_counts (
    actor_id TEXT PRIMARY KEY,
    n        INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO pending_proposal_counts (actor_id, n)
    SELECT actor_id, COUNT(*) FROM proposals WHERE status = 'pending' GROUP BY actor_id;

CREATE TRIGGER proposals_pending_insert AFTER INSERT ON proposals WHEN NEW.status = 'pending' BEGIN
    INSERT INTO pending_proposal_counts (actor_id, n) VALUES (NEW.actor_id, 1)
        ON CONFLICT (actor_id) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER proposals_pending_delete AFTER DELETE ON proposals WHEN OLD.status = 'pending' BEGIN
    UPDATE pending_proposal_counts SET n = n - 1 WHERE actor_id = OLD.actor_id;
END;
CREATE TRIGGER proposals_pending_update AFTER UPDATE OF status, actor_id ON proposals BEGIN
    UPDATE pending_proposal_counts SET n = n - 1 WHERE actor_id = OLD.actor_id AND OLD.status = 'pending';
    INSERT INTO pending_proposal_counts (actor_id, n) SELECT NEW.actor_id, 1 WHERE NEW.status = 'pending'
        ON CONFLICT (actor_id) DO UPDATE SET n = n + 1;
END;

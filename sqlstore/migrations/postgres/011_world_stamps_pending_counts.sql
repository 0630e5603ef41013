-- A world's stamp: a number that changes whenever what read_world
-- answers for the world changes (its row, presence, opened POIs or
-- inventory), written by triggers so that no writer, in this process or
-- another on the same database, can forget it. Stamps come from one
-- sequence, so a world never has the same stamp twice. A reader that kept
-- an answer with its stamp can check it with one primary-key read instead
-- of reading the world again. The stamps are a table of their own, not a
-- column of worlds: a presence write holds the world's row FOR SHARE, and
-- two of them would deadlock upgrading that lock to bump a column.
CREATE SEQUENCE world_stamp_seq;

CREATE TABLE world_stamps (
    world_id TEXT PRIMARY KEY,
    stamp    BIGINT NOT NULL
);
INSERT INTO world_stamps (world_id, stamp) SELECT id, nextval('world_stamp_seq') FROM worlds;

CREATE FUNCTION world_stamp_bump(wid TEXT) RETURNS void LANGUAGE sql AS $$
    INSERT INTO world_stamps (world_id, stamp) VALUES (wid, nextval('world_stamp_seq'))
        ON CONFLICT (world_id) DO UPDATE SET stamp = excluded.stamp;
$$;

CREATE FUNCTION worlds_stamped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM world_stamps WHERE world_id = OLD.id;
        RETURN NULL;
    END IF;
    PERFORM world_stamp_bump(NEW.id);
    IF TG_OP = 'UPDATE' AND OLD.id <> NEW.id THEN
        PERFORM world_stamp_bump(OLD.id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER worlds_stamped AFTER INSERT OR UPDATE OR DELETE ON worlds
    FOR EACH ROW EXECUTE FUNCTION worlds_stamped();

CREATE FUNCTION world_runtime_stamped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE world_stamps SET stamp = nextval('world_stamp_seq') WHERE world_id = OLD.world_id;
        RETURN NULL;
    END IF;
    PERFORM world_stamp_bump(NEW.world_id);
    IF TG_OP = 'UPDATE' AND OLD.world_id <> NEW.world_id THEN
        PERFORM world_stamp_bump(OLD.world_id);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER presence_stamped AFTER INSERT OR UPDATE OR DELETE ON presence
    FOR EACH ROW EXECUTE FUNCTION world_runtime_stamped();
CREATE TRIGGER opened_pois_stamped AFTER INSERT OR UPDATE OR DELETE ON opened_pois
    FOR EACH ROW EXECUTE FUNCTION world_runtime_stamped();
CREATE TRIGGER inventory_stamped AFTER INSERT OR UPDATE OR DELETE ON inventory
    FOR EACH ROW EXECUTE FUNCTION world_runtime_stamped();

-- Each proposer's pending proposals, counted by triggers on proposals, so
-- that the quota check at filing reads one row instead of counting the
-- proposer's proposals (a walk of all of them, decided ones included).
-- The check runs with the proposer's user row locked, so the counts of
-- one proposer change one transaction at a time.
CREATE TABLE pending_proposal_counts (
    actor_id TEXT PRIMARY KEY,
    n        BIGINT NOT NULL
);
INSERT INTO pending_proposal_counts (actor_id, n)
    SELECT actor_id, COUNT(*) FROM proposals WHERE status = 'pending' GROUP BY actor_id;

CREATE FUNCTION proposals_pending_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status = 'pending' THEN
        UPDATE pending_proposal_counts SET n = n - 1 WHERE actor_id = OLD.actor_id;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.status = 'pending' THEN
        INSERT INTO pending_proposal_counts (actor_id, n) VALUES (NEW.actor_id, 1)
            ON CONFLICT (actor_id) DO UPDATE SET n = pending_proposal_counts.n + 1;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER proposals_pending_counted AFTER INSERT OR DELETE OR UPDATE OF status, actor_id ON proposals
    FOR EACH ROW EXECUTE FUNCTION proposals_pending_counted();

-- Changeset ids are scoped: a changeset id names a changeset of one world
-- (a proposal's world), or, for proposals outside any world (a quest or
-- encounter without a world), of one user: the proposer, who owns the
-- row. The same id in two worlds, or for two users outside worlds, names
-- two changesets, so no caller can tell which names others use or take
-- a name before them. Until now the id was the table's primary key,
-- global across tenants.
--
-- The primary key goes; every old id is unique, so it stays unique
-- within its scope and every row is kept. proposals_changeset gains
-- world_id, so that committing a world's changeset seeks to its proposals
-- instead of reading every world's proposals that use the same name.
ALTER TABLE changesets DROP CONSTRAINT changesets_pkey;
ALTER TABLE changesets ALTER COLUMN id SET NOT NULL;
CREATE UNIQUE INDEX changesets_world ON changesets (world_id, id) WHERE world_id IS NOT NULL;
CREATE UNIQUE INDEX changesets_user ON changesets (created_by, id) WHERE world_id IS NULL;

DROP INDEX proposals_changeset;
CREATE INDEX proposals_changeset ON proposals (changeset_id, world_id);

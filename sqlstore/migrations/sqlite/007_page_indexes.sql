-- Paged lists: list_campaigns, list_quests, list_encounters,
-- list_atlas_places and list_factions answer one page at a time, each page
-- starting after the sort key of the previous page's last row (keyset
-- paging, sqlstore/pages.go). Each list is read through an index in
-- exactly its order, ending in id, so that a page seeks to its first row
-- and stops at its last instead of sorting the whole list:
--
--   campaigns, quests, encounters: the owner's rows (or a campaign's),
--     most recently updated first, then by id;
--   atlas nodes: a world's, by level, name, then id;
--   lore factions: a world's, by name, then id (list_factions; a partial
--     index, so that no other collection's writes pay for it).
--
-- (list_wiki_pages walks wiki_pages_world_title and
-- wiki_pages_world_kind_title of migration 003.) The indexes that each new
-- one starts with are dropped: the new one serves their lookups too (the
-- campaign indexes the foreign keys' ON DELETE SET NULL), so writes keep
-- the same number of indexes, except lore factions' one more.

DROP INDEX campaigns_owner;
CREATE INDEX campaigns_owner_page ON campaigns (owner_id, updated_at DESC, id);

DROP INDEX quests_owner;
DROP INDEX quests_campaign;
CREATE INDEX quests_owner_page ON quests (owner_id, updated_at DESC, id);
CREATE INDEX quests_campaign_page ON quests (campaign_id, owner_id, updated_at DESC, id);

DROP INDEX encounters_owner;
DROP INDEX encounters_campaign;
CREATE INDEX encounters_owner_page ON encounters (owner_id, updated_at DESC, id);
CREATE INDEX encounters_campaign_page ON encounters (campaign_id, owner_id, updated_at DESC, id);

DROP INDEX atlas_nodes_world;
CREATE INDEX atlas_nodes_world_page ON atlas_nodes (world_id, level, name, id);

CREATE INDEX lore_entities_faction_name ON lore_entities (world_id, name, id) WHERE collection = 'factions';

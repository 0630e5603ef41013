-- Wiki searches and listings of one world walk its live pages in title
-- order (all kinds, or one kind) and stop at the page's end instead of
-- sorting every match.
CREATE INDEX wiki_pages_world_title ON wiki_pages (world_id, title, id);
CREATE INDEX wiki_pages_world_kind_title ON wiki_pages (world_id, kind, title, id);

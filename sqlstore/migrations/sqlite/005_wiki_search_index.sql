-- Wiki search: a trigram full-text index over the titles and
-- bodies of the live wiki pages, so that a search for a text few pages hold
-- reads those pages instead of walking the world's.
--
-- wiki_search is a contentless FTS5 table (the text stays in wiki_pages
-- only) with the trigram tokenizer: a phrase query of three characters or
-- more finds every row holding that substring, case-folded. The index only
-- chooses candidates; the search re-checks the original LIKE on each
-- (sqlstore/wiki_search.go), so what matches is exactly what the plain scan
-- matches.
--
-- Its rowids are the docids of wiki_search_docs, one per live page (the
-- implicit rowid of wiki_pages cannot serve: VACUUM may renumber it). A
-- page's docid is seq·2^32 + n, seq numbering its world in
-- wiki_search_worlds and n counting up within the world: one world's pages
-- are one rowid range, which FTS5 reads alone, so a text common in other
-- worlds costs nothing in this one. (n reaches 2^32 after four billion page
-- versions of one world.)
--
-- The triggers keep the tables in step with every write of wiki_pages in
-- the writing transaction itself: a page inserted live, an edit of its
-- title, body or world, archiving (deleted_at set), restoring, and deletion
-- (the cascade of a deleted world included). A row of wiki_search_docs
-- exists exactly while its page is live, and its docid is in its world's
-- range.
--
-- Like every migration this runs in one BEGIN IMMEDIATE transaction that
-- first checks schema_migrations, so replicas starting together build the
-- index once, and the backfill sees every page.

CREATE TABLE wiki_search_worlds (
    seq      INTEGER PRIMARY KEY,
    world_id TEXT NOT NULL UNIQUE
);

CREATE TABLE wiki_search_docs (
    docid   INTEGER PRIMARY KEY,
    page_id TEXT NOT NULL UNIQUE
);

CREATE VIRTUAL TABLE wiki_search USING fts5(
    title, body,
    content = '', contentless_delete = 1, tokenize = 'trigram'
);

CREATE TRIGGER wiki_search_insert AFTER INSERT ON wiki_pages
WHEN new.deleted_at IS NULL
BEGIN
    INSERT INTO wiki_search_worlds (world_id) SELECT new.world_id
        WHERE NOT EXISTS (SELECT 1 FROM wiki_search_worlds WHERE world_id = new.world_id);
    INSERT INTO wiki_search_docs (docid, page_id)
        SELECT 1 + COALESCE((SELECT docid FROM wiki_search_docs WHERE docid >= w.seq << 32 AND docid < (w.seq + 1) << 32
            ORDER BY docid DESC LIMIT 1), w.seq << 32), new.id
        FROM wiki_search_worlds w WHERE w.world_id = new.world_id;
    INSERT INTO wiki_search (rowid, title, body)
        SELECT docid, new.title, new.body FROM wiki_search_docs WHERE page_id = new.id;
END;

CREATE TRIGGER wiki_search_update AFTER UPDATE OF id, world_id, title, body, deleted_at ON wiki_pages
WHEN old.id IS NOT new.id OR old.world_id IS NOT new.world_id OR old.title IS NOT new.title
    OR old.body IS NOT new.body OR (old.deleted_at IS NULL) <> (new.deleted_at IS NULL)
BEGIN
    DELETE FROM wiki_search WHERE rowid = (SELECT docid FROM wiki_search_docs WHERE page_id = old.id);
    DELETE FROM wiki_search_docs WHERE page_id = old.id;
    INSERT INTO wiki_search_worlds (world_id) SELECT new.world_id
        WHERE new.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM wiki_search_worlds WHERE world_id = new.world_id);
    INSERT INTO wiki_search_docs (docid, page_id)
        SELECT 1 + COALESCE((SELECT docid FROM wiki_search_docs WHERE docid >= w.seq << 32 AND docid < (w.seq + 1) << 32
            ORDER BY docid DESC LIMIT 1), w.seq << 32), new.id
        FROM wiki_search_worlds w WHERE w.world_id = new.world_id AND new.deleted_at IS NULL;
    INSERT INTO wiki_search (rowid, title, body)
        SELECT docid, new.title, new.body FROM wiki_search_docs WHERE page_id = new.id;
END;

CREATE TRIGGER wiki_search_delete AFTER DELETE ON wiki_pages
BEGIN
    DELETE FROM wiki_search WHERE rowid = (SELECT docid FROM wiki_search_docs WHERE page_id = old.id);
    DELETE FROM wiki_search_docs WHERE page_id = old.id;
END;

CREATE TRIGGER wiki_search_world_delete AFTER DELETE ON worlds
BEGIN
    DELETE FROM wiki_search_worlds WHERE world_id = old.id;
END;

-- Backfill: every live page, in one pass, then the index merged into one
-- segment (a query reads each segment).
INSERT INTO wiki_search_worlds (world_id)
    SELECT DISTINCT world_id FROM wiki_pages WHERE deleted_at IS NULL ORDER BY world_id;
INSERT INTO wiki_search_docs (docid, page_id)
    SELECT (w.seq << 32) + ROW_NUMBER() OVER (PARTITION BY p.world_id ORDER BY p.id), p.id
    FROM wiki_pages p JOIN wiki_search_worlds w ON w.world_id = p.world_id
    WHERE p.deleted_at IS NULL;
INSERT INTO wiki_search (rowid, title, body)
    SELECT d.docid, p.title, p.body FROM wiki_search_docs d JOIN wiki_pages p ON p.id = d.page_id ORDER BY d.docid;
INSERT INTO wiki_search (wiki_search) VALUES ('optimize');

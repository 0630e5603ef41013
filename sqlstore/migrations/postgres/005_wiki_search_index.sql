-- Wiki search: pg_trgm GIN indexes on the lower-cased titles and
-- bodies of the live wiki pages, so that a search for a text few pages hold
-- reads those pages (a bitmap of their trigrams) instead of walking the
-- world's. The search keeps its condition, LOWER(col) LIKE '%…%', which
-- these indexes serve as written; the index is lossy and PostgreSQL
-- re-checks the condition on each candidate, so what matches is exactly
-- what the plain scan matches.
--
-- pg_trgm ships with PostgreSQL (contrib) and is a trusted extension: a
-- role with CREATE on the database may install it. It goes into public
-- when that schema exists and is writable (so that one installation serves
-- every schema of the database), else into the current schema. When it
-- cannot be created (not installed, no privilege) the migration still
-- succeeds without the indexes: the search then walks the pages as before,
-- Open logs a warning, and every later Open tries again (sqlstore/wiki.go,
-- ensureWikiTrigram), so installing the extension and restarting is enough.
--
-- fastupdate = off: a page's trigrams go into the index when it is
-- written, not into GIN's pending list, which every search would read in
-- full until VACUUM merges it (30 ms for 10k fresh pages).
--
-- Like every migration this runs in one transaction holding the migration
-- advisory lock, so replicas starting together build the indexes once; the
-- index build reads every existing page (the backfill).

DO $wf$
DECLARE
    trgm text;
BEGIN
    SELECT n.nspname INTO trgm FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm';
    IF trgm IS NULL THEN
        BEGIN
            IF to_regnamespace('public') IS NOT NULL AND has_schema_privilege('public', 'CREATE') THEN
                CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
            ELSE
                CREATE EXTENSION IF NOT EXISTS pg_trgm;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            RAISE WARNING 'worldforge: cannot create extension pg_trgm (%): wiki search walks the pages', SQLERRM;
            RETURN;
        END;
        SELECT n.nspname INTO trgm FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
            WHERE e.extname = 'pg_trgm';
    END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS wiki_pages_title_trgm ON wiki_pages USING gin (lower(title) %I.gin_trgm_ops) WITH (fastupdate = off) WHERE deleted_at IS NULL', trgm);
    EXECUTE format('CREATE INDEX IF NOT EXISTS wiki_pages_body_trgm ON wiki_pages USING gin (lower(body) %I.gin_trgm_ops) WITH (fastupdate = off) WHERE deleted_at IS NULL', trgm);
END
$wf$;

-- Statistics of the new index expressions for the planner.
ANALYZE wiki_pages;

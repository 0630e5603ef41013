-- World documents in pieces: a world's document larger than the
-- store's chunk size (sqlstore.DocChunkBytes, 256 KiB) is kept in
-- world_doc_chunks, its bytes exactly as given cut into pieces of that
-- size numbered from 0 (seq), so that read_world can send it to the
-- client as it reads it, in one snapshot, instead of building the whole
-- answer in memory. worlds.doc is then NULL and doc_len holds the
-- document's length; doc_splice is 1 when the runtime state can be spliced
-- into it (worldforge.SplicesRuntime). A smaller document stays in
-- worlds.doc as before (doc_len NULL, no chunks), and so do the documents
-- of every world written before this migration, whatever their size:
-- nothing is moved. Writing a document (sqlstore/worlddoc.go) replaces the
-- world's chunks in the same transaction. BLOB: a piece may end inside a
-- multi-byte character.
ALTER TABLE worlds ADD COLUMN doc_len BIGINT;
ALTER TABLE worlds ADD COLUMN doc_splice INTEGER NOT NULL DEFAULT 0;

CREATE TABLE world_doc_chunks (
    world_id TEXT NOT NULL REFERENCES worlds (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    data     BLOB NOT NULL,
    PRIMARY KEY (world_id, seq)
);

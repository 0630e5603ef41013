// Package sqlstoretest reaches the settings of package sqlstore that only
// tests change, from the tests of any package of the module, without
// putting them in sqlstore's exported API. Package sqlstore installs the
// hooks when it is initialised.
package sqlstoretest

var setDocChunkBytes func(db any, n int)

// Install is called by package sqlstore, once, from its init; nothing
// else calls it.
func Install(docChunkBytes func(db any, n int)) { setDocChunkBytes = docChunkBytes }

// SetDocChunkBytes makes db, a *sqlstore.DB, store world documents larger
// than n bytes in pieces of n bytes (sqlstore.DocChunkBytes when n is not
// positive), so that tests exercise the chunked form with small
// documents. It affects writes made after it.
func SetDocChunkBytes(db any, n int) { setDocChunkBytes(db, n) }

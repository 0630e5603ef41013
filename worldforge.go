// Package worldforge holds the domain of WorldForge: the records the platform
// keeps (users, API keys, worlds, campaigns, quests, encounters, wiki pages,
// atlas nodes, POIs, lore, proposals, audit rows), the scopes that guard them,
// the actor a request runs as, the error codes every layer speaks, and the
// storage interfaces that the adapters implement.
//
// The package depends on the standard library only, so that the Go SDK for
// /mcp (package client) can share the tool argument and result types declared
// here without pulling in the server. Adapters depend on this package and
// never on each other:
//
//	sqlstore   the Store on SQLite (embedded default) or PostgreSQL
//	auth       API keys, session JWTs, actor resolution
//	mcpserver  the MCP tools on one shared go-sdk server
//	httpapi    the HTTP surface: bearer auth, /mcp, REST
//	cmd/worldforge wires them together
package worldforge

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// Version is the server's version, reported in the MCP implementation info.
const Version = "0.1.0"

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewID returns a new random identifier with the given prefix, such as
// "world_3k2m…". The random part carries 100 bits.
func NewID(prefix string) string {
	var b [15]byte // 120 bits, 24 base32 characters; we keep 20 (100 bits)
	if _, err := rand.Read(b[:]); err != nil {
		panic("worldforge: crypto/rand failed: " + err.Error())
	}
	return prefix + "_" + idEncoding.EncodeToString(b[:])[:20]
}

// ValidID reports whether s has the shape of an identifier NewID made with
// the given prefix. It is used to reject malformed ids before any store work.
func ValidID(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(rest) == 0 || len(rest) > 64 {
		return false
	}
	for _, c := range rest {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

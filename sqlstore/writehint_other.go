//go:build !linux

package sqlstore

// sqliteWriteHint adds nothing where the checks it makes on Linux are not
// available.
func sqliteWriteHint(string) string { return "" }

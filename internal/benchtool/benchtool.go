// Package benchtool carries the setting of the bench-only tool bench_noop
// from the serve command (the --bench-noop flag it has only when
// worldforge-bench runs it, for `worldforge-bench compare` to measure the
// protocol layer and middleware alone) to package mcpserver, outside
// mcpserver's exported API. Package mcpserver installs the hook when it is
// initialised.
package benchtool

// NoopTool is the name of the bench-only tool: no scope, no store, no
// audit row, answering a fixed JSON document.
const NoopTool = "bench_noop"

var enableNoop func(opts any, payload string)

// Install is called by package mcpserver, once, from its init; nothing
// else calls it.
func Install(f func(opts any, payload string)) { enableNoop = f }

// EnableNoop makes a server built with opts, a *mcpserver.Options, also
// register NoopTool, answering the JSON document payload.
func EnableNoop(opts any, payload string) { enableNoop(opts, payload) }

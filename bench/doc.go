// Package bench load-tests MCP servers over the stateless streamable HTTP
// transport and measures what a request costs.
//
// [Load] drives a closed loop: Concurrency workers, each keeping one request
// in flight over a keep-alive connection of its own, post a JSON-RPC
// tools/call (built by [ToolCallBody] and [ToolCallHeaders] for the
// 2026-07-28 or 2025-11-25 protocol revision, or one distinct body per
// request by [SequencedBody]) for a fixed Duration, read every response to
// the end and verify it ([DefaultVerify]: HTTP 200, a JSON-RPC result, no
// error, no isError — JSON or SSE bodies; [VerifyProposal] for writes). It
// reports throughput (req/s), latency percentiles from a log-linear
// histogram, the error count, and the CPU time the server and the load
// generator used over the measured phase; [RSSSampler] adds the server's
// peak and last resident memory, and [FormatTable] prints runs side by
// side, marking the rows whose server stayed under [ClientBoundShare] of
// its core.
//
// The default client, [ClientRaw], is built to cost the generator as
// little as possible, so that the server, not the client, is what a run
// measures: requests built once, a minimal HTTP/1.1 response reader
// (Content-Length, chunked, or to the end of the connection) into buffers
// each worker reuses, and an allocation-free check of the answer. Its hot
// loop allocates nothing. [ClientNetHTTP] uses net/http's client instead.
//
// [NewBaselineHandler] is the floor those numbers are compared against: a
// bare go-sdk server (stateless, JSON responses, one shared *mcp.Server)
// whose only tool, read_world, returns a fixed [BaselinePayloadSize]-byte
// world document without touching storage, auth or anything else. The
// difference between the baseline and the real server is what the
// project's own code costs per call.
//
// Absolute numbers depend on the machine, its load, the Go version, GOMAXPROCS
// and the fact that the load generator usually shares the CPUs with the
// server, so they do not transfer between machines or even between runs
// minutes apart. Compare ratios instead: run the baseline and the server
// under test in the same process invocation, one after the other at the same
// concurrency, and read each result as a fraction of the baseline's req/s
// ([SetRatios]). Noise that hits both runs cancels out of the ratio, and a
// ratio that drops between commits points at the code rather than the box.
//
// Every run is bounded by time (LoadConfig.Duration, capped at MaxDuration)
// and optionally by count (LoadConfig.MaxRequests), and only sends traffic
// to a loopback URL.
//
// The go test benchmark BenchmarkBaselineToolCall measures the baseline
// with b.RunParallel; setting WORLDFORGE_BENCH=1 makes TestBaselineMatrix
// print a table of baseline runs (3 s each at c=8 and c=64, both
// protocol revisions).
package bench

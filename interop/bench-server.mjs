// The TypeScript SDK baseline of `worldforge-bench compare`: @modelcontextprotocol/sdk
// (the version pinned in interop/package-lock.json) serving, on /mcp, one
// tool, read_world (input: {id: string}), that returns the bench payload as
// one text content block — the work the go-sdk floor does.
//
//   node interop/bench-server.mjs --payload FILE [--addr 127.0.0.1:0] [--mode fresh|pool]
//
// Node's http server, a stateless StreamableHTTPServerTransport
// (sessionIdGenerator: undefined) with enableJsonResponse: true.
//
//   --mode fresh  a new McpServer and transport per request, closed when the
//                 response is done: the SDK's stateless example, and the
//                 original WorldForge server's design.
//   --mode pool   McpServers reused from a pool; see acquire() for why the
//                 transport is still fresh per request.
//
// The payload comes from a file that bench writes, so it is byte-identical
// to bench.BaselinePayload(). On listening it prints
// "worldforge: listening on http://ADDR/mcp" to stderr, the line bench
// waits for; SIGINT or SIGTERM end it cleanly.
import http from "node:http";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import * as z from "zod";

function usage(msg) {
  console.error(`bench-server: ${msg}\nusage: node bench-server.mjs --payload FILE [--addr HOST:PORT] [--mode fresh|pool]`);
  process.exit(2);
}

let opts;
try {
  opts = parseArgs({
    options: {
      addr: { type: "string", default: "127.0.0.1:0" },
      payload: { type: "string" },
      mode: { type: "string", default: "fresh" },
    },
  }).values;
} catch (err) {
  usage(err.message);
}
if (!opts.payload) usage("--payload is required");
if (opts.mode !== "fresh" && opts.mode !== "pool") usage(`--mode must be fresh or pool, not ${JSON.stringify(opts.mode)}`);
const sep = opts.addr.lastIndexOf(":");
if (sep < 0) usage(`--addr ${JSON.stringify(opts.addr)} is not HOST:PORT`);
const host = opts.addr.slice(0, sep).replace(/^\[(.*)\]$/, "$1");
const port = Number(opts.addr.slice(sep + 1));
if (!Number.isInteger(port) || port < 0 || port > 65535) usage(`--addr ${JSON.stringify(opts.addr)}: bad port`);
const payload = readFileSync(opts.payload, "utf8");

function newServer() {
  const server = new McpServer({ name: "worldforge-bench-ts", version: "0" });
  server.registerTool(
    "read_world",
    {
      description: "Read a world (benchmark baseline: always returns the same document).",
      inputSchema: { id: z.string() },
    },
    async ({ id }) =>
      id
        ? { content: [{ type: "text", text: payload }] }
        : { isError: true, content: [{ type: "text", text: "read_world: id is required" }] },
  );
  return server;
}

// The pool. The SDK decides what may be reused:
//  - a stateless transport serves one request only: a second handleRequest
//    throws "Stateless transport cannot be reused across requests" (its
//    JSON-RPC ids would collide between clients);
//  - a McpServer (a Protocol) is connected to one transport at a time:
//    connect() throws "Already connected to a transport" until that
//    transport has closed, and closing it resets the server's per-connection
//    state and detaches it, after which it may connect again.
// So the pool holds idle McpServers — their tool registry, request handlers
// and compiled input schemas, the part that is costly to build — and each
// request still gets a fresh transport. A server serves one request at a
// time; the pool grows to the peak concurrency and never shrinks.
const idle = [];

function acquire() {
  return idle.pop() ?? newServer();
}

async function serve(req, res) {
  const server = opts.mode === "pool" ? acquire() : newServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", async () => {
    // Closing the transport detaches the server from it (Protocol._onclose).
    await transport.close();
    if (opts.mode === "pool") idle.push(server);
    else await server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}

const httpServer = http.createServer(async (req, res) => {
  if (new URL(req.url, "http://localhost").pathname !== "/mcp") {
    res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
    return;
  }
  if (req.method !== "POST") {
    // Stateless: no standalone SSE stream to GET, no session to DELETE.
    res
      .writeHead(405, { "Content-Type": "application/json", Allow: "POST" })
      .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }));
    return;
  }
  try {
    await serve(req, res);
  } catch (err) {
    console.error("bench-server: handling a request:", err);
    if (!res.headersSent) {
      res
        .writeHead(500, { "Content-Type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: "Internal server error" }, id: null }));
    }
  }
});

httpServer.listen(port, host, () => {
  const a = httpServer.address();
  const h = a.family === "IPv6" ? `[${a.address}]` : a.address;
  console.error(`worldforge: listening on http://${h}:${a.port}/mcp`);
});

function shutdown() {
  // Stop accepting, drop the keep-alive connections, and let the event loop
  // run dry: pooled servers hold no handles.
  httpServer.close(() => process.exit(0));
  httpServer.closeAllConnections();
}
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

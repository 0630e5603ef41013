// The official TypeScript MCP clients against a running `worldforge serve`.
//
//   node interop/tsclient.mjs <mcp-url> <api-key> <world-id>
//
// Three runs, each: list tools (31), read_world, propose_wiki_page, and
// read_world with an unknown id (an isError result whose text is not_found):
//   sdk-1     @modelcontextprotocol/sdk (v1), initialize-based 2025-11-25
//   client-2  @modelcontextprotocol/client (v2), its default legacy connect
//   client-2-stateless  @modelcontextprotocol/client (v2) pinned to 2026-07-28
//             (server/discover, no initialize)
// Prints one line per check ("ok <run> <check>" or "FAIL <run> <check>: …")
// and exits 1 if any check failed. Versions come from interop/package-lock.json.
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";

const [url, key, worldId] = process.argv.slice(2);
if (!url || !key || !worldId) {
  console.error("usage: node tsclient.mjs <mcp-url> <api-key> <world-id>");
  process.exit(2);
}
const requestInit = { headers: { Authorization: `Bearer ${key}` } };
let failed = 0;

// recordingFetch notes the JSON-RPC methods a client POSTs, to check which
// handshake it really used.
function recordingFetch(methods) {
  return async (input, init) => {
    if (init?.method === "POST" && typeof init.body === "string") {
      try {
        const msg = JSON.parse(init.body);
        for (const m of Array.isArray(msg) ? msg : [msg]) if (m.method) methods.push(m.method);
      } catch {}
    }
    return fetch(input, init);
  };
}

function check(run, name, cond, detail) {
  if (cond) {
    console.log(`ok ${run} ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${run} ${name}: ${detail}`);
  }
}

function text(res) {
  return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function exercise(run, client, wantProtocol, protocolOf) {
  const proto = protocolOf();
  check(run, "protocol", proto === wantProtocol, `negotiated ${proto}, want ${wantProtocol}`);

  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const names = tools.map((t) => t.name);
  check(run, "tools/list", tools.length === 31, `${tools.length} tools: ${names.join(",")}`);
  check(run, "tools/list names", names.includes("read_world") && names.includes("propose_wiki_page"),
    `read_world or propose_wiki_page missing: ${names.join(",")}`);

  const read = await client.callTool({ name: "read_world", arguments: { id: worldId } });
  const readText = text(read);
  check(run, "read_world", !read.isError && readText.includes(worldId),
    `isError=${read.isError} text=${readText.slice(0, 300)}`);

  const prop = await client.callTool({
    name: "propose_wiki_page",
    arguments: { world_id: worldId, payload: { title: "T" }, diff_summary: "d" },
  });
  const propText = text(prop);
  check(run, "propose_wiki_page", !prop.isError && /proposal|"id"/i.test(propText),
    `isError=${prop.isError} text=${propText.slice(0, 300)}`);

  const missing = await client.callTool({ name: "read_world", arguments: { id: "no-such-world" } });
  const missingText = text(missing);
  check(run, "read_world unknown id", missing.isError === true && missingText.includes("not_found"),
    `isError=${missing.isError} text=${missingText.slice(0, 300)}`);
}

async function run(name, fn) {
  try {
    await fn();
  } catch (err) {
    failed++;
    console.log(`FAIL ${name} exception: ${err?.stack ?? err}`);
  }
}

await run("sdk-1", async () => {
  const client = new ClientV1({ name: "worldforge-interop-sdk1", version: "0" });
  const methods = [];
  const transport = new TransportV1(new URL(url), { requestInit, fetch: recordingFetch(methods) });
  await client.connect(transport);
  try {
    check("sdk-1", "initialize", methods[0] === "initialize", `first methods: ${methods.join(",")}`);
    await exercise("sdk-1", client, "2025-11-25", () => transport.protocolVersion);
  } finally {
    await client.close();
  }
});

await run("client-2", async () => {
  const client = new ClientV2({ name: "worldforge-interop-client2", version: "0" });
  const transport = new TransportV2(new URL(url), { requestInit });
  await client.connect(transport);
  try {
    await exercise("client-2", client, "2025-11-25", () => client.getNegotiatedProtocolVersion());
  } finally {
    await client.close();
  }
});

await run("client-2-stateless", async () => {
  const client = new ClientV2(
    { name: "worldforge-interop-client2-stateless", version: "0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  const methods = [];
  const transport = new TransportV2(new URL(url), { requestInit, fetch: recordingFetch(methods) });
  await client.connect(transport);
  try {
    check("client-2-stateless", "no initialize", methods.includes("server/discover") && !methods.includes("initialize"),
      `methods: ${methods.join(",")}`);
    check("client-2-stateless", "era", client.getProtocolEra() === "modern", `era ${client.getProtocolEra()}`);
    await exercise("client-2-stateless", client, "2026-07-28", () => client.getNegotiatedProtocolVersion());
  } finally {
    await client.close();
  }
});

console.log(failed ? `FAIL ${failed} check(s) failed` : "PASS");
process.exit(failed ? 1 : 0);

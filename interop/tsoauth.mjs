// The official TypeScript SDK's client with its OAuth client provider,
// given nothing but a running `worldforge serve`'s MCP URL.
//
//   node interop/tsoauth.mjs <sdk-1|client-2> <mcp-url> <world-id> [ms-to-wait-for-expiry] [client-metadata-url]
//
// sdk-1 is @modelcontextprotocol/sdk (v1), client-2 @modelcontextprotocol/client
// (v2, which also checks the callback's iss against the metadata's issuer).
//
// The provider plays a desktop app: its redirect URI is a loopback
// listener of its own, and redirectToAuthorization prints
// "AUTHORIZE <url>" — the Go test (tsoauth_test.go) is the person's
// browser: it approves on the console's consent page and follows the
// redirect back to the listener. With a client metadata URL the client
// uses it as its client_id (a client ID metadata document) instead of
// registering. Then the client lists tools, calls
// read_world, waits for its short-lived access token to expire so that
// the SDK refreshes it on the 401, calls again, and revokes its refresh
// token (RFC 7009), after which the server refuses it.
// Prints one line per check ("ok <check>" or "FAIL <check>: …") and exits 1
// if any check failed.
import http from "node:http";
import { randomBytes } from "node:crypto";

const [sdk, mcpUrl, worldId, waitMs, clientMetadataUrl] = process.argv.slice(2);
if (!["sdk-1", "client-2"].includes(sdk) || !mcpUrl || !worldId) {
  console.error("usage: node tsoauth.mjs <sdk-1|client-2> <mcp-url> <world-id> [ms-to-wait-for-expiry]");
  process.exit(2);
}
const { Client, StreamableHTTPClientTransport, UnauthorizedError } =
  sdk === "sdk-1"
    ? {
        ...(await import("@modelcontextprotocol/sdk/client/index.js")),
        ...(await import("@modelcontextprotocol/sdk/client/streamableHttp.js")),
        ...(await import("@modelcontextprotocol/sdk/client/auth.js")),
      }
    : await import("@modelcontextprotocol/client");
let failed = 0;
function check(name, cond, detail) {
  if (cond) {
    console.log(`ok ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${detail}`);
  }
}
const text = (res) => (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");

// The loopback redirect listener.
let onCallback;
const callbacks = [];
const listener = http.createServer((req, res) => {
  const u = new URL(req.url, "http://127.0.0.1");
  if (u.pathname !== "/callback") {
    res.writeHead(404).end();
    return;
  }
  res.end("Authorization finished: you may close this window.\n");
  callbacks.push(u);
  onCallback?.(u);
});
await new Promise((resolve) => listener.listen(0, "127.0.0.1", resolve));
const redirectUrl = `http://127.0.0.1:${listener.address().port}/callback`;
const nextCallback = () => new Promise((resolve) => (onCallback = resolve));

// Token requests, for the checks (the provider never sees a refresh).
const tokenRequests = [];
const recordingFetch = async (input, init) => {
  const u = new URL(typeof input === "string" ? input : input.url ?? input.href);
  if (u.pathname === "/token" && init?.body) tokenRequests.push(new URLSearchParams(String(init.body)).get("grant_type"));
  return fetch(input, init);
};

class Provider {
  constructor() {
    this.states = [];
    if (clientMetadataUrl) this.clientMetadataUrl = clientMetadataUrl;
  }
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    // The SDK's examples ask for a client secret; the server registers
    // every client as public and says so.
    return {
      client_name: `TypeScript ${sdk} e2e`,
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_post",
    };
  }
  state() {
    const s = randomBytes(16).toString("base64url");
    this.states.push(s);
    return s;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info) {
    this.info = info;
  }
  tokens() {
    return this.toks;
  }
  saveTokens(t) {
    this.toks = t;
  }
  redirectToAuthorization(url) {
    this.authURL = url;
    console.log(`AUTHORIZE ${url.toString()}`);
  }
  saveCodeVerifier(v) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  // v2 keeps what discovery found, to check on the callback that the
  // code comes from the same authorization server.
  saveDiscoveryState(state) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

const provider = new Provider();
const newTransport = () =>
  new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: recordingFetch });

async function main() {
  // 1. The first connect meets the 401, discovers, registers and sends
  // the person to the authorization URL.
  let transport = newTransport();
  let client = new Client({ name: "ts-sdk-oauth-e2e", version: "1.0.0" });
  const callback = nextCallback();
  let unauthorized = false;
  try {
    await client.connect(transport);
  } catch (err) {
    unauthorized = err instanceof UnauthorizedError;
    if (!unauthorized) throw err;
  }
  check("401 starts authorization", unauthorized, "connect succeeded without a token");
  if (clientMetadataUrl) {
    check("metadata document URL as client_id", provider.info?.client_id === clientMetadataUrl, JSON.stringify(provider.info));
  } else {
    check("registered", typeof provider.info?.client_id === "string", JSON.stringify(provider.info));
    check("registered as a public client", provider.info?.token_endpoint_auth_method === "none" && !provider.info?.client_secret,
      JSON.stringify(provider.info));
  }
  const au = provider.authURL;
  check("authorization request", au && au.searchParams.get("code_challenge_method") === "S256" &&
    au.searchParams.get("resource") === mcpUrl, au?.toString());

  // 2. The person approves; the browser comes back to the listener.
  const cb = await callback;
  check("callback state", cb.searchParams.get("state") === provider.states.at(-1), cb.toString());
  check("callback iss", cb.searchParams.get("iss") === new URL(mcpUrl).origin, cb.toString());
  // v2 takes the callback's parameters and checks iss itself.
  await transport.finishAuth(sdk === "sdk-1" ? cb.searchParams.get("code") : cb.searchParams);
  check("tokens", provider.toks?.access_token?.startsWith("wfa_") && provider.toks?.refresh_token?.startsWith("wfr_"),
    JSON.stringify(Object.keys(provider.toks ?? {})));

  // 3. Connected with the token: tools.
  transport = newTransport();
  client = new Client({ name: "ts-sdk-oauth-e2e", version: "1.0.0" });
  await client.connect(transport);
  const tools = (await client.listTools()).tools.map((t) => t.name);
  check("tools/list", tools.includes("read_world"), tools.join(","));
  const read = await client.callTool({ name: "read_world", arguments: { id: worldId } });
  check("read_world", !read.isError && text(read).includes(worldId), text(read).slice(0, 300));

  // 4. Refresh: after the access token expires the server answers 401 and
  // the SDK refreshes (rotating the refresh token) without the person.
  const firstRefresh = provider.toks.refresh_token;
  await new Promise((r) => setTimeout(r, Number(waitMs || 0)));
  const again = await client.callTool({ name: "read_world", arguments: { id: worldId } });
  check("read_world after expiry", !again.isError && text(again).includes(worldId), text(again).slice(0, 300));
  check("refreshed", tokenRequests.includes("refresh_token") && provider.toks.refresh_token !== firstRefresh,
    `token requests: ${tokenRequests.join(",")}`);
  check("no second authorization", callbacks.length === 1, `${callbacks.length} callbacks`);

  // 5. Revocation (RFC 7009) of the refresh token ends the grant: the
  // access token is refused too.
  const origin = new URL(mcpUrl).origin;
  const rev = await fetch(`${origin}/revoke`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: provider.toks.refresh_token, client_id: provider.info.client_id, token_type_hint: "refresh_token" }),
  });
  check("revoke", rev.status === 200, `status ${rev.status}`);
  const probe = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${provider.toks.access_token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  check("revoked token refused", probe.status === 401 && /resource_metadata=/.test(probe.headers.get("www-authenticate") ?? ""),
    `status ${probe.status} ${probe.headers.get("www-authenticate")}`);
  await client.close();
}

try {
  await main();
} catch (err) {
  failed++;
  console.log(`FAIL exception: ${err?.stack ?? err}`);
}
listener.close();
console.log(failed ? `FAILED ${failed}` : "PASS");
process.exit(failed ? 1 : 0);

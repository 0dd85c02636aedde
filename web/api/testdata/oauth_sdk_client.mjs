// A hosted MCP client as the MCP TypeScript SDK's own OAuth client runs
// it, driven by TestTheTypeScriptSDKConnectsWithOAuth: it connects to the
// MCP URL (argv[2]) with nothing else, is told to authorize by the 401,
// prints {"authorize": url} and reads the redirect the person's consent
// led to from stdin, finishes the flow, lists the tools, then spoils its
// access token so the next call must refresh, and lists again. With a
// client metadata document URL (argv[3]) it uses that as its client_id
// instead of registering; REDIRECT_URI, when set, is its redirect URI.
// Each result is one JSON line on stdout.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const [mcpURL, documentURL] = process.argv.slice(2);
const redirectURI = process.env.REDIRECT_URI || "http://127.0.0.1:7777/callback";
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (o) => process.stdout.write(JSON.stringify(o) + "\n");

const store = { client: undefined, tokens: undefined, verifier: undefined, redirected: undefined };
const provider = {
  get redirectUrl() { return redirectURI; },
  clientMetadataUrl: documentURL || undefined,
  get clientMetadata() {
    return { client_name: "SDK test client", redirect_uris: [redirectURI],
      grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation() { return store.client; },
  saveClientInformation(info) { store.client = info; },
  tokens() { return store.tokens; },
  saveTokens(tokens) { store.tokens = tokens; say({ tokens: { refresh: !!tokens.refresh_token, expires_in: tokens.expires_in } }); },
  async redirectToAuthorization(url) {
    say({ authorize: url.toString() });
    store.redirected = new URL((await lines.next()).value);
  },
  saveCodeVerifier(v) { store.verifier = v; },
  codeVerifier() { return store.verifier; },
};

async function connect() {
  const client = new Client({ name: "sdk-oauth-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider }));
  return client;
}

try {
  let client;
  try {
    client = await connect();
  } catch (err) {
    if (!(err instanceof UnauthorizedError) || !store.redirected) throw err;
    say({ redirected: { iss: store.redirected.searchParams.get("iss"), error: store.redirected.searchParams.get("error") } });
    const transport = new StreamableHTTPClientTransport(new URL(mcpURL), { authProvider: provider });
    await transport.finishAuth(store.redirected.searchParams.get("code"));
    client = await connect();
  }
  say({ client_id: store.client?.client_id, tools: (await client.listTools()).tools.map((t) => t.name) });
  await client.close();

  const issued = store.tokens.access_token;
  store.tokens = { ...store.tokens, access_token: "cso_at_spoiled" };
  client = await connect();
  say({ refreshed: store.tokens.access_token !== issued && store.tokens.access_token !== "cso_at_spoiled",
    tools: (await client.listTools()).tools.map((t) => t.name) });
  await client.close();
  process.exit(0);
} catch (err) {
  say({ error: String(err && err.stack || err) });
  process.exit(1);
}

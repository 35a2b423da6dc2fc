// The TypeScript SDK v2 client (@modelcontextprotocol/client) pinned to MCP
// 2026-07-28, for mcpserver's tests: it connects to toolgate over HTTP
// ("http URL KEY") or stdio ("stdio COMMAND ARGS..."), lists the tools, and
// makes the calls given as JSON in $TG_CALLS ([{name, arguments}, ...]).
// It prints one JSON line: the negotiated revision, the tool names and each
// call's structuredContent (or its error).
//
// $TG_MCP_CLIENT is the directory of the installed package: the test
// installs it into .cache/npm, which is not above this file.
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const dir = process.env.TG_MCP_CLIENT;
const { Client, StreamableHTTPClientTransport } = await import(pathToFileURL(join(dir, 'dist/index.mjs')).href);

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === 'http') {
  const [url, key] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
  });
} else {
  const { StdioClientTransport } = await import(pathToFileURL(join(dir, 'dist/stdio.mjs')).href);
  const [command, ...args] = rest;
  transport = new StdioClientTransport({ command, args, stderr: 'inherit' });
}

const client = new Client(
  { name: 'toolgate-ts-test', version: '1' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(transport);
const out = { version: client.getNegotiatedProtocolVersion(), tools: [], calls: [] };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => t.name).sort();
for (const call of JSON.parse(process.env.TG_CALLS || '[]')) {
  try {
    const res = await client.callTool(call);
    out.calls.push({ isError: res.isError === true, text: res.content?.[0]?.text, envelope: res.structuredContent });
  } catch (err) {
    out.calls.push({ error: String(err?.message ?? err) });
  }
}
await client.close();
console.log(JSON.stringify(out));

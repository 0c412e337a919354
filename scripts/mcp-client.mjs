// The official MCP clients against a running Shipgraph (scripts/mcp-client.sh):
// the TypeScript SDK's client over Streamable HTTP lists the tools, calls
// every one and compares each answer with the /v2 answer for the same
// record (the SDK also checks each structured result against the tool's
// output schema), then the errors: bad arguments, another account's ids,
// a viewer's track_container, an exhausted cost budget. Then the MCP
// Inspector's CLI lists and calls a tool over HTTP and over `shipgraph mcp`
// (stdio). One line per check, OK or FAIL; exits 1 on any failure.
//
// node mcp-client.mjs BASE BUDGET_BASE SHIPGRAPH_BIN
// Keys: MCP_ADMIN_KEY, MCP_VIEWER_KEY (acme), MCP_OTHER_KEY (globex admin).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [base, budgetBase, bin] = process.argv.slice(2);
const admin = process.env.MCP_ADMIN_KEY, viewer = process.env.MCP_VIEWER_KEY, other = process.env.MCP_OTHER_KEY;
let failed = 0;
const ok = (name, cond, detail = "") => {
  console.log(`${cond ? "OK" : "FAIL"} ${name}${cond ? "" : " " + detail}`);
  if (!cond) failed++;
};

async function connect(url, key) {
  const client = new Client({ name: "shipgraph-ts-check", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url + "/mcp"), {
    requestInit: { headers: { Authorization: `Token ${key}` } },
  });
  await client.connect(transport);
  return client;
}

async function v2(path, key = admin) {
  const r = await fetch(base + path, { headers: { Authorization: `Token ${key}` } });
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

const text = (res) => res.content?.[0]?.text ?? "";

async function call(client, name, args) {
  try {
    return await client.callTool({ name, arguments: args });
  } catch (e) {
    return { protocolError: e, isError: true, content: [{ text: String(e) }] };
  }
}

const want = [
  "search_container", "track_container", "get_container", "get_shipment_details", "get_container_transport_events",
  "get_supported_shipping_lines", "get_container_route", "list_shipments", "list_containers", "list_tracking_requests",
  "container_stats", "shipment_stats", "pickup_worklist",
];

const c = await connect(base, admin);
ok("initialize: server is shipgraph", c.getServerVersion()?.name === "shipgraph", JSON.stringify(c.getServerVersion()));
const { tools } = await c.listTools();
const names = tools.map((t) => t.name).sort();
ok("tools/list names", JSON.stringify(names) === JSON.stringify([...want].sort()), names.join(","));
for (const t of tools) {
  ok(`${t.name}: schemas and annotations`, t.inputSchema?.type === "object" && t.outputSchema?.type === "object" && t.annotations !== undefined);
}
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
ok("get_container input schema", JSON.stringify(byName.get_container.inputSchema.required) === '["id"]' &&
  JSON.stringify(byName.get_container.inputSchema.properties.include.items.enum) === '["shipment","pod_terminal","transport_events"]');
ok("track_container annotations", byName.track_container.annotations.readOnlyHint === false && byName.track_container.annotations.openWorldHint === true);
ok("get_container annotations", byName.get_container.annotations.readOnlyHint === true && byName.get_container.annotations.idempotentHint === true);

// A record of each kind, from /v2.
const containerDoc = (await v2("/v2/containers?page[size]=1")).data[0];
const C = containerDoc.id, number = containerDoc.attributes.number;
const S = containerDoc.relationships.shipment.data.id;

let r = await call(c, "search_container", { query: number });
ok("search_container finds the container", !r.isError && r.structuredContent.containers.some((x) => x.id === C), text(r));

r = await call(c, "get_container", { id: C, include: ["shipment", "pod_terminal", "transport_events"] });
const ca = (await v2(`/v2/containers/${C}`)).data.attributes;
const got = r.structuredContent?.container ?? {};
ok("get_container = /v2 container", !r.isError && ["number", "current_status", "pickup_lfd", "available_for_pickup", "pod_arrived_at"]
  .every((k) => String(got[k] ?? null) === String(ca[k] ?? null)), text(r));
ok("get_container includes the shipment", got.shipment?.id === S);

r = await call(c, "get_shipment_details", { id: S });
const sa = (await v2(`/v2/shipments/${S}`)).data.attributes;
ok("get_shipment_details = /v2 shipment", !r.isError && ["bill_of_lading_number", "shipping_line_scac", "pod_eta_at", "port_of_discharge_name"]
  .every((k) => String(r.structuredContent.shipment[k] ?? null) === String(sa[k] ?? null)), text(r));

r = await call(c, "get_container_transport_events", { id: C });
const evs = (await v2(`/v2/containers/${C}/transport_events`)).data;
ok("get_container_transport_events = /v2 transport_events", !r.isError &&
  JSON.stringify(r.structuredContent.container.transport_events.map((e) => e.event)) === JSON.stringify(evs.map((e) => e.attributes.event)), text(r));

r = await call(c, "get_container_route", { id: C });
const route = await v2(`/v2/containers/${C}/route?include=route_location`);
const calls = (route.included ?? []).filter((x) => x.type === "route_location").map((x) => x.relationships.location.data.id);
ok("get_container_route = /v2 route", !r.isError && JSON.stringify(r.structuredContent.route_locations.map((l) => l.port.id)) === JSON.stringify(calls), text(r));

r = await call(c, "get_supported_shipping_lines", {});
const lines = await v2("/v2/shipping_lines?page[size]=100");
ok("get_supported_shipping_lines = /v2 shipping_lines", !r.isError && r.structuredContent.total_lines === lines.data.length, `${text(r)} vs ${lines.data.length}`);

const totals = {};
for (const [tool, path] of [["list_shipments", "/v2/shipments"], ["list_containers", "/v2/containers"], ["list_tracking_requests", "/v2/tracking_requests"]]) {
  r = await call(c, tool, { page_size: 5, ...(tool === "list_containers" ? { include: "shipment,pod_terminal" } : {}) });
  const doc = await v2(`${path}?page[size]=5`);
  totals[tool] = doc.meta.total;
  ok(`${tool} = ${path}`, !r.isError && r.structuredContent.meta.total === doc.meta.total &&
    JSON.stringify(r.structuredContent.items.map((x) => x.id)) === JSON.stringify(doc.data.map((x) => x.id)), text(r));
}
r = await call(c, "container_stats", { group_by: ["status"] });
ok("container_stats sums to the containers", !r.isError && r.structuredContent.container_stats.reduce((n, g) => n + g.count, 0) === totals.list_containers, text(r));
r = await call(c, "shipment_stats", { group_by: ["shipping_line"] });
ok("shipment_stats sums to the shipments", !r.isError && r.structuredContent.shipment_stats.reduce((n, g) => n + g.count, 0) === totals.list_shipments, text(r));
r = await call(c, "pickup_worklist", { page_size: 10 });
ok("pickup_worklist", !r.isError && Array.isArray(r.structuredContent.items), text(r));

r = await call(c, "track_container", { number: "MSKU1234565", scac: "MAEU" });
const tr = r.structuredContent?.tracking_request;
ok("track_container creates a tracking request", !r.isError && tr?.request_type === "container", text(r));
if (tr) {
  const doc = await v2(`/v2/tracking_requests/${tr.id}`);
  ok("track_container's request is in /v2", doc.data.attributes.request_number === "MSKU1234565");
}

// Errors: tool results with isError and the API's message, never a protocol error.
const otherContainer = (await v2("/v2/containers?page[size]=1", other)).data[0];
for (const [name, args, code] of [
  ["get_container", { id: "not-a-uuid" }, "BAD_USER_INPUT"],
  ["get_container", {}, "BAD_USER_INPUT"],
  ["get_container", { id: C, include: ["everything"] }, "BAD_USER_INPUT"],
  ["list_shipments", { page_size: 1000 }, "BAD_USER_INPUT"],
  ["track_container", { number: "MSKU1234560", numberType: "container", scac: "MAEU" }, "BAD_USER_INPUT"],
  ["get_container", { id: "00000000-0000-4000-8000-000000000000" }, "NOT_FOUND"],
  ["get_container", { id: otherContainer.id }, "NOT_FOUND"],
  ["get_shipment_details", { id: otherContainer.relationships.shipment.data.id }, "NOT_FOUND"],
  ["get_container_transport_events", { id: otherContainer.id }, "NOT_FOUND"],
]) {
  r = await call(c, name, args);
  ok(`${name} ${JSON.stringify(args)} → ${code}`, r.isError && !r.protocolError && text(r).startsWith(code), text(r));
}

const v = await connect(base, viewer);
const vt = (await v.listTools()).tools.map((t) => t.name);
ok("a viewer's tools/list has no track_container", !vt.includes("track_container") && vt.length === want.length - 1, vt.join(","));
r = await call(v, "track_container", { number: "MSKU1234565", scac: "MAEU" });
ok("a viewer's track_container is refused", r.isError && !r.protocolError && text(r).startsWith("FORBIDDEN"), text(r));
r = await call(v, "get_container", { id: C });
ok("a viewer reads", !r.isError, text(r));

const res = await c.readResource({ uri: `shipgraph://container/${C}` });
ok("resource shipgraph://container/{id}", JSON.parse(res.contents[0].text).id === C);
const { resourceTemplates } = await c.listResourceTemplates();
ok("resource template listed", resourceTemplates.some((t) => t.uriTemplate === "shipgraph://container/{id}"));
const gl = await c.readResource({ uri: "shipgraph://docs/milestone-glossary" });
ok("milestone glossary", gl.contents[0].text.includes("container.transport.vessel_discharged"));

const b = await connect(budgetBase, admin);
let refused = "";
for (let i = 0; i < 50 && !refused; i++) {
  r = await call(b, "list_containers", { page_size: 25 });
  if (r.isError) refused = text(r);
}
ok("an exhausted cost budget is a tool error", refused.startsWith("COST_BUDGET_EXCEEDED") && !r.protocolError, refused);
await Promise.all([c.close(), v.close(), b.close()]);

// The MCP Inspector's CLI, over HTTP and over `shipgraph mcp` (stdio).
const inspector = join(dirname(fileURLToPath(import.meta.url)), "node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
const run = (args, env = {}) => {
  try {
    // Its build/ as the working directory: it looks for ../package.json there.
    return JSON.parse(execFileSync("node", [inspector, ...args], { cwd: dirname(inspector), env: { ...process.env, ...env }, encoding: "utf8", timeout: 120000 }));
  } catch (e) {
    return { error: String(e), stdout: e.stdout, stderr: e.stderr };
  }
};
const auth = ["--header", `Authorization: Token ${admin}`];
let out = run([base + "/mcp", "--transport", "http", ...auth, "--method", "tools/list"]);
ok("inspector over HTTP: tools/list", out.tools?.length === want.length, JSON.stringify(out).slice(0, 500));
out = run([base + "/mcp", "--transport", "http", ...auth, "--method", "tools/call", "--tool-name", "get_container", "--tool-arg", `id=${C}`]);
ok("inspector over HTTP: get_container", out.structuredContent?.container?.number === number, JSON.stringify(out).slice(0, 500));
const stdio = { SHIPGRAPH_API_KEY: viewer };
out = run([bin, "mcp", "--url", base + "/mcp", "--method", "tools/list"], stdio);
ok("inspector over stdio: tools/list (viewer)", out.tools?.length === want.length - 1, JSON.stringify(out).slice(0, 500));
out = run([bin, "mcp", "--url", base + "/mcp", "--method", "tools/call", "--tool-name", "search_container", "--tool-arg", `query=${number}`], stdio);
ok("inspector over stdio: search_container", out.structuredContent?.containers?.some((x) => x.id === C), JSON.stringify(out).slice(0, 500));

console.log(failed ? `${failed} checks failed` : "all checks passed");
process.exit(failed ? 1 : 0);

// Drives the official TypeScript SDK (@terminal49/sdk 0.4.0), unmodified,
// against a private Shipgraph server with make run's demo data, and prints
// one line per SDK method: "OK  <method>" or "FAIL <method>: <status> <error>".
// Exits 1 when any call fails. Run it through scripts/sdk-check.sh, which
// builds the binary; it is not part of make test or CI (they have no SDK).
//
//   node scripts/sdk-check.mjs SDK_DIR
//
// SDK_DIR is the SDK's package directory after `npm ci && npm run build`
// (it holds dist/index.js and node_modules/); see scripts/sdk-check.sh for
// how to build it from the public repository. The script seeds a fresh
// DATA_DIR under the system temp directory, serves on a free 127.0.0.1 port
// the way make run does (demo activity on) and removes it all at exit.
// SHIPGRAPH_BIN overrides the binary (default bin/shipgraph of this repo).
//
// The tracking half runs against the carrier simulator: the script starts
// `shipgraph carrier-sim --addr 127.0.0.1:0 --seed N` (SHIPGRAPH_SIM_BIN
// overrides its binary, SDK_CHECK_SIM_SEED the seed, default 1), reads its
// CARRIERS line and passes it to serve with WEBHOOK_ALLOW_PRIVATE_URLS=true
// (a webhook receiver on 127.0.0.1 hears tracking_request.succeeded). It
// picks numbers from the simulator's GET /sim/numbers, creates tracking
// requests through the SDK and polls getTrackingRequest until the poller
// settles each one, within SDK_CHECK_TRACK_TIMEOUT seconds (default 60);
// the time each took is printed on its line.
//
// A FAIL line carries the SDK's error (class, status, message, first error
// object) and the last HTTP answer the call received: method, path, status
// and the body's first 600 characters.
//
// The SDK's own methods are used wherever 0.4.0 has one. It has none for
// documents, email submissions or a single shipping line: those calls go
// through the SDK's request pipeline (Transport.executeManual: the same
// auth header, retries and error mapping as its public methods) and are
// marked "(transport)".
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sdkArg = process.argv[2];
if (!sdkArg) {
  console.error('usage: node scripts/sdk-check.mjs SDK_DIR   (the built @terminal49/sdk package directory)');
  process.exit(2);
}
const sdkDir = resolve(sdkArg);
const entry = [join(sdkDir, 'dist', 'index.js'), join(sdkDir, 'index.js')].find(existsSync);
if (!entry) {
  console.error(`no dist/index.js under ${sdkDir}: build the SDK first (npm ci && npm run build)`);
  process.exit(2);
}
const sdk = await import(pathToFileURL(entry).href);
const { Terminal49Client } = sdk;

const bin = process.env.SHIPGRAPH_BIN || join(repo, 'bin', 'shipgraph');
const simBin = process.env.SHIPGRAPH_SIM_BIN || bin;
const simSeed = process.env.SDK_CHECK_SIM_SEED || '1';
const trackTimeoutMs = 1000 * Number(process.env.SDK_CHECK_TRACK_TIMEOUT || 60);
const dataDir = mkdtempSync(join(tmpdir(), 'shipgraph-sdk-check-'));
let server;
let sim;
let receiver;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// stop ends a child process: SIGTERM, then SIGKILL if it has not exited
// within 15 s; resolves once it has exited.
async function stop(p) {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const done = new Promise((r) => p.once('exit', r));
  p.kill('SIGTERM');
  const exited = await Promise.race([done.then(() => true), sleep(15000).then(() => false)]);
  if (!exited) { p.kill('SIGKILL'); await Promise.race([done, sleep(5000)]); }
}
let cleaned;
function cleanup() {
  cleaned ??= (async () => {
    try {
      receiver?.srv.close();
      await Promise.all([stop(server), stop(sim)]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  })();
  return cleaned;
}
for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]]) process.on(sig, async () => { await cleanup(); process.exit(code); });

function run(args, env) {
  return new Promise((ok, fail) => {
    const p = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('exit', (code) => (code === 0 ? ok(out) : fail(new Error(`${bin} ${args.join(' ')}: exit ${code}\n${err}`))));
  });
}

function freePort() {
  return new Promise((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
  });
}

// startSim runs the carrier simulator on a free port (port 0: it prints the
// address it took) and returns its base URL and CARRIERS setting.
async function startSim() {
  sim = spawn(simBin, ['carrier-sim', '--addr', '127.0.0.1:0', '--seed', simSeed], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const ready = new Promise((ok, fail) => {
    let base;
    sim.stdout.on('data', (d) => {
      log += d;
      base ??= log.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)?.[1];
      const carriers = log.match(/^CARRIERS=(\S+)$/m)?.[1];
      if (base && carriers) ok({ base, carriers });
    });
    sim.stderr.on('data', (d) => { log += d; });
    sim.once('error', (e) => fail(new Error(`${simBin} carrier-sim: ${e.message}`)));
    sim.once('exit', (code) => fail(new Error(`${simBin} carrier-sim exited ${code} before it was ready\n${log}`)));
  });
  const timeout = sleep(30000).then(() => { throw new Error(`carrier-sim not ready after 30s\n${log}`); });
  return Promise.race([ready, timeout]);
}

async function startServer(extraEnv) {
  const env = { DATA_DIR: dataDir, DATABASE_URL: '' };
  const seeded = await run(['seed', '--if-empty'], env);
  const keys = {};
  for (const line of seeded.split('\n')) {
    const [word, account, role, key] = line.trim().split(/\s+/);
    if (word === 'token') keys[`${account} ${role}`] = key;
  }
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let log = '';
  server = spawn(bin, ['serve', '--addr', `127.0.0.1:${port}`, '--demo-activity', '4s'], {
    env: { ...process.env, ...env, ...extraEnv, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout.on('data', (d) => { log += d; });
  server.stderr.on('data', (d) => { log += d; });
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`serve exited ${server.exitCode}\n${log}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return { base, keys }; // ready: the database answers
    } catch { /* not up yet */ }
    await sleep(100);
  }
  throw new Error(`server not healthy after 60s\n${log}`);
}

// ---- reporting ----
// Every SDK client fetches through recordingFetch: the last answer a check
// received (method, path, status, body) is kept in that check's async
// context, so a FAIL line shows what the server said.
const calls = new AsyncLocalStorage();
async function recordingFetch(input, init) {
  const res = await fetch(input, init);
  const store = calls.getStore();
  if (store) {
    const req = input instanceof Request ? input : new Request(input, init);
    const url = new URL(req.url);
    let body = '';
    try { body = await res.clone().text(); } catch { /* unreadable body */ }
    store.last = `${req.method} ${url.pathname}${url.search} ${res.status} ${body.replace(/\s+/g, ' ').slice(0, 600)}`;
  }
  return res;
}
let failures = 0;
function describe(e) {
  const status = e?.status ?? '-';
  const detail = e?.details?.errors?.[0];
  const extra = detail ? ` ${JSON.stringify({ status: detail.status, title: detail.title, detail: detail.detail, source: detail.source })}` : '';
  return `${status} ${e?.name ?? 'Error'}: ${e?.message ?? e}${extra}`;
}
const lastAnswer = (store) => (store.last ? ` -- last answer: ${store.last}` : '');
// check runs one SDK call; verify(result) throws when the answer is not what
// an SDK user would expect. Returns the result, or undefined on failure.
// note(result), when given, is appended to the OK line.
async function check(name, call, verify = () => {}, note) {
  const store = {};
  try {
    const result = await calls.run(store, call);
    verify(result);
    console.log(`OK   ${name}${note ? ` (${note(result)})` : ''}`);
    return result;
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${describe(e)}${lastAnswer(store)}`);
    return undefined;
  }
}
// expectError: the call must be refused with this SDK error class.
async function expectError(name, call, cls, status) {
  const store = {};
  try {
    await calls.run(store, call);
    failures++;
    console.log(`FAIL ${name}: succeeded, expected ${cls.name} ${status}${lastAnswer(store)}`);
  } catch (e) {
    if (e instanceof cls && e.status === status) console.log(`OK   ${name} (${cls.name} ${status})`);
    else { failures++; console.log(`FAIL ${name}: expected ${cls.name} ${status}, got ${describe(e)}${lastAnswer(store)}`); }
  }
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }
const isDoc = (type, id) => (doc) => {
  assert(doc && typeof doc === 'object' && doc.data, `no JSON:API document: ${JSON.stringify(doc)?.slice(0, 200)}`);
  const items = Array.isArray(doc.data) ? doc.data : [doc.data];
  for (const item of items) assert(item.type === type, `type ${item.type}, want ${type}`);
  if (id) assert(!Array.isArray(doc.data) && doc.data.id === id, `id ${doc.data.id}, want ${id}`);
};
const isList = (type, min = 1) => (doc) => {
  isDoc(type)(doc);
  assert(Array.isArray(doc.data), 'data is not an array');
  assert(doc.data.length >= min, `${doc.data.length} items, want at least ${min}`);
};
const both = (v) => (r) => { assert(r && r.raw && r.mapped, 'format both: no raw/mapped'); v(r); };

// ---- the calls ----
async function main() {
  // Without the simulator the demo data part still runs; the tracking part
  // then fails with the simulator's error.
  const carrier = await startSim().catch((e) => ({ error: e }));
  const { base, keys } = await startServer({ CARRIERS: carrier.carriers ?? '', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' });
  const client = (role) => new Terminal49Client({ apiToken: keys[role], apiBaseUrl: base, maxRetries: 0, fetchImpl: recordingFetch });
  const admin = client('acme admin');
  // The SDK's request pipeline, for the resources 0.4.0 has no method for.
  const transport = admin.transport;
  const ctx = {
    admin, viewer: client('acme viewer'), other: client('globex admin'), transport, carrier,
    v2: (path) => `${transport.baseUrl}${path}`,
    json: (method, body) => ({ method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
    stamp: Date.now().toString(36),
  };
  // Each part goes on when the other fails to set up.
  for (const [part, calls] of [['demo data', demoCalls], ['tracking', trackingCalls]]) {
    try { await calls(ctx); } catch (e) { failures++; console.log(`FAIL ${part}: ${e?.stack ?? e}`); }
  }
}

// ---- the demo data: shipments, custom fields, lines, webhooks, documents ----
async function demoCalls({ admin, viewer, other, transport, v2, json, stamp }) {

  // Shipments
  const shipments = await check('listShipments()', () => admin.listShipments(), isList('shipment'));
  await check('shipments.list({ includeContainers: false }, { pageSize: 5, page: 2 })', () => admin.shipments.list({ includeContainers: false }, { pageSize: 5, page: 2 }), isList('shipment'));
  await check('shipments.list({ trackingStopped: false })', () => admin.shipments.list({ trackingStopped: false }), isList('shipment'));
  await check('shipments.list({}, { format: "mapped" })', () => admin.shipments.list({}, { format: 'mapped' }), (r) => assert(r.items.length > 0 && r.items[0].id, 'no mapped items'));
  const shipmentId = shipments?.data?.[0]?.id;
  const shipmentNumber = shipments?.data?.[0]?.attributes?.bill_of_lading_number;
  if (!shipmentId) throw new Error('no shipment to work on');
  if (shipmentNumber) await check('shipments.list({ number })', () => admin.shipments.list({ number: shipmentNumber }), (d) => {
    isList('shipment')(d);
    assert(d.data.every((s) => s.attributes.bill_of_lading_number === shipmentNumber), 'number filter lists other shipments');
  });
  const shipment = await check('getShipment(id)', () => admin.getShipment(shipmentId), isDoc('shipment', shipmentId));
  await check('getShipment(id, false)', () => admin.getShipment(shipmentId, false), isDoc('shipment', shipmentId));
  await check('shipments.get(id, true, { format: "both" })', () => admin.shipments.get(shipmentId, true, { format: 'both' }), both((r) => assert(r.mapped.id === shipmentId, 'mapped id')));
  await check('shipments.iterate({}, { pageSize: 50, maxPages: 2 })', async () => { let n = 0; for await (const s of admin.shipments.iterate({}, { pageSize: 50, maxPages: 2 })) { assert(s.id, 'item without id'); n++; } return n; }, (n) => assert(n === 100, `${n} items, want 100`));
  await check('deserialize(getShipment)', () => admin.deserialize(shipment), (o) => assert(o.id === shipmentId, 'deserialized id'));
  await check('updateShipment(id, { ref_numbers, tags })', () => admin.updateShipment(shipmentId, { ref_numbers: [`SDK-${stamp}`], tags: ['sdk-check'] }), (d) => {
    isDoc('shipment', shipmentId)(d);
    assert(JSON.stringify(d.data.attributes.ref_numbers) === JSON.stringify([`SDK-${stamp}`]), `ref_numbers ${JSON.stringify(d.data.attributes.ref_numbers)}`);
  });
  await check('stopTrackingShipment(id)', () => admin.stopTrackingShipment(shipmentId), (d) => {
    isDoc('shipment', shipmentId)(d);
    assert(d.data.attributes.line_tracking_stopped_at, 'line_tracking_stopped_at not set');
  });
  await check('shipments.list({ trackingStopped: true })', () => admin.shipments.list({ trackingStopped: true }), (d) => {
    isList('shipment')(d);
    assert(d.data.some((s) => s.id === shipmentId), 'stopped shipment not listed');
    assert(d.data.every((s) => s.attributes.line_tracking_stopped_at), 'a tracking shipment is listed');
  });
  await check('resumeTrackingShipment(id)', () => admin.resumeTrackingShipment(shipmentId), (d) => {
    isDoc('shipment', shipmentId)(d);
    assert(!d.data.attributes.line_tracking_stopped_at, 'line_tracking_stopped_at still set');
  });
  await expectError('getShipment(unknown id)', () => admin.getShipment('00000000-0000-4000-8000-000000000000'), sdk.NotFoundError, 404);
  await expectError('getShipment(other account\'s id)', () => other.getShipment(shipmentId), sdk.NotFoundError, 404);
  await expectError('updateShipment as viewer', () => viewer.updateShipment(shipmentId, { tags: ['x'] }), sdk.AuthorizationError, 403);

  // Containers (for their custom fields)
  const containers = await check('listContainers()', () => admin.listContainers(), isList('container'));
  const containerId = containers?.data?.[0]?.id;
  if (!containerId) throw new Error('no container to work on');

  // Custom field definitions
  await check('customFieldDefinitions.list()', () => admin.customFieldDefinitions.list(), isList('custom_field_definition'));
  const defPayload = (entity, slug, dataType = 'short_text') => ({ data: { type: 'custom_field_definition', attributes: { entity_type: entity, api_slug: slug, display_name: `SDK ${slug}`, data_type: dataType } } });
  const shipDef = await check('customFieldDefinitions.create(Shipment short_text)', () => admin.customFieldDefinitions.create(defPayload('Shipment', `sdk_ship_${stamp}`)), isDoc('custom_field_definition'));
  const contDef = await check('customFieldDefinitions.create(Container short_text)', () => admin.customFieldDefinitions.create(defPayload('Container', `sdk_cont_${stamp}`)), isDoc('custom_field_definition'));
  const enumDef = await check('customFieldDefinitions.create(Shipment enum)', () => admin.customFieldDefinitions.create(defPayload('Shipment', `sdk_enum_${stamp}`, 'enum')), isDoc('custom_field_definition'));
  const shipDefId = shipDef?.data?.id;
  const contDefId = contDef?.data?.id;
  const enumDefId = enumDef?.data?.id;
  if (shipDefId) {
    await check('customFieldDefinitions.get(id)', () => admin.customFieldDefinitions.get(shipDefId), isDoc('custom_field_definition', shipDefId));
    await check('customFieldDefinitions.update(id, { display_name, description })', () => admin.customFieldDefinitions.update(shipDefId, { data: { type: 'custom_field_definition', attributes: { display_name: 'SDK renamed', description: 'from the SDK' } } }), (d) => {
      isDoc('custom_field_definition', shipDefId)(d);
      assert(d.data.attributes.display_name === 'SDK renamed', `display_name ${d.data.attributes.display_name}`);
    });
  }
  await expectError('customFieldDefinitions.create(bad data_type)', () => admin.customFieldDefinitions.create(defPayload('Shipment', `sdk_bad_${stamp}`, 'colour')), sdk.ValidationError, 422);
  await expectError('customFieldDefinitions.create as viewer', () => viewer.customFieldDefinitions.create(defPayload('Shipment', `sdk_v_${stamp}`)), sdk.AuthorizationError, 403);

  // Custom field options (of the enum definition)
  if (enumDefId) {
    const opt = await check('customFieldOptions.create(defId)', () => admin.customFieldOptions.create(enumDefId, { data: { type: 'custom_field_option', attributes: { value: 'red', label: 'Red' } } }), isDoc('custom_field_option'));
    await check('customFieldOptions.list(defId)', () => admin.customFieldOptions.list(enumDefId), isList('custom_field_option'));
    const optId = opt?.data?.id;
    if (optId) {
      await check('customFieldOptions.get(defId, id)', () => admin.customFieldOptions.get(enumDefId, optId), isDoc('custom_field_option', optId));
      await check('customFieldOptions.update(defId, id)', () => admin.customFieldOptions.update(enumDefId, optId, { data: { type: 'custom_field_option', attributes: { label: 'Rouge' } } }), isDoc('custom_field_option', optId));
      await check('customFieldOptions.delete(defId, id)', () => admin.customFieldOptions.delete(enumDefId, optId));
    }
  }

  // Custom fields already set in the demo data: setCustomField changes
  // them (the public service's POST creates or updates), then restores.
  for (const [what, mgr, list, slug] of [['shipments', admin.shipments, shipments?.data, 'customer_po'], ['containers', admin.containers, containers?.data, 'yard_slot']]) {
    let target;
    for (const rec of list ?? []) {
      const cf = (await mgr.customFields(rec.id)).data.find((f) => f.attributes.api_slug === slug);
      if (cf) { target = { id: rec.id, field: cf }; break; }
    }
    if (!target) { failures++; console.log(`FAIL ${what}.setCustomField(demo value): no demo ${what} has ${slug}`); continue; }
    const old = target.field.attributes.value;
    await check(`${what}.setCustomField(id, '${slug}', value) on a demo value`, () => mgr.setCustomField(target.id, slug, `${old}-sdk`), (d) => {
      isDoc('custom_field', target.field.id)(d);
      assert(d.data.attributes.value === `${old}-sdk`, `value ${JSON.stringify(d.data.attributes.value)}`);
    });
    await check(`${what}.setCustomField(id, '${slug}', old value) restores it`, () => mgr.setCustomField(target.id, slug, old), isDoc('custom_field', target.field.id));
  }

  // Custom fields
  if (shipDefId && contDefId) {
    const shipSlug = `sdk_ship_${stamp}`;
    const contSlug = `sdk_cont_${stamp}`;
    const onShip = await check('shipments.setCustomField(id, slug, value)', () => admin.shipments.setCustomField(shipmentId, shipSlug, 'first'), isDoc('custom_field'));
    await check('shipments.setCustomField(id, slug, value) again (set an existing value)', () => admin.shipments.setCustomField(shipmentId, shipSlug, 'second'), (d) => {
      isDoc('custom_field')(d);
      assert(d.data.attributes.value === 'second', `value ${JSON.stringify(d.data.attributes.value)}`);
    });
    await check('shipments.customFields(id)', () => admin.shipments.customFields(shipmentId), (d) => {
      isList('custom_field')(d);
      assert(d.data.some((f) => f.attributes.api_slug === shipSlug), 'new field not listed');
    });
    const onCont = await check('containers.setCustomField(id, slug, value)', () => admin.containers.setCustomField(containerId, contSlug, 'B-12'), isDoc('custom_field'));
    await check('containers.customFields(id)', () => admin.containers.customFields(containerId), (d) => {
      isList('custom_field')(d);
      assert(d.data.some((f) => f.attributes.api_slug === contSlug), 'new field not listed');
    });
    await check('customFields.list()', () => admin.customFields.list(), isList('custom_field'));
    await check('customFields.list({ pageSize: 2, page: 2 })', () => admin.customFields.list({ pageSize: 2, page: 2 }), isList('custom_field'));
    const shipFieldId = onShip?.data?.id;
    const contFieldId = onCont?.data?.id;
    if (shipFieldId) {
      await check('customFields.get(id) (shipment)', () => admin.customFields.get(shipFieldId), isDoc('custom_field', shipFieldId));
      await check('customFields.update(id, value) (shipment)', () => admin.customFields.update(shipFieldId, { data: { type: 'custom_field', attributes: { value: 'third' } } }), (d) => {
        isDoc('custom_field', shipFieldId)(d);
        assert(d.data.attributes.value === 'third', `value ${JSON.stringify(d.data.attributes.value)}`);
      });
      await expectError('customFields.update as viewer', () => viewer.customFields.update(shipFieldId, { data: { type: 'custom_field', attributes: { value: 'x' } } }), sdk.AuthorizationError, 403);
      await expectError('customFields.get(other account)', () => other.customFields.get(shipFieldId), sdk.NotFoundError, 404);
      await check('customFields.delete(id) (shipment)', () => admin.customFields.delete(shipFieldId));
      await expectError('customFields.get(deleted id)', () => admin.customFields.get(shipFieldId), sdk.NotFoundError, 404);
    }
    if (contFieldId) {
      await check('customFields.get(id) (container)', () => admin.customFields.get(contFieldId), isDoc('custom_field', contFieldId));
      await check('customFields.update(id, value) (container)', () => admin.customFields.update(contFieldId, { data: { type: 'custom_field', attributes: { value: 'C-7' } } }), isDoc('custom_field', contFieldId));
      await check('customFields.delete(id) (container)', () => admin.customFields.delete(contFieldId));
    }
    // Top-level create, with the entity as a relationship (the OpenAPI body).
    const created = await check('customFields.create({ api_slug, value, entity: shipment })', () => admin.customFields.create({ data: { type: 'custom_field', attributes: { api_slug: shipSlug, value: 'top' }, relationships: { entity: { data: { type: 'shipment', id: shipmentId } } } } }), isDoc('custom_field'));
    const created2 = await check('customFields.create({ api_slug, value, entity: container })', () => admin.customFields.create({ data: { type: 'custom_field', attributes: { api_slug: contSlug, value: 'top' }, relationships: { entity: { data: { type: 'container', id: containerId } } } } }), isDoc('custom_field'));
    if (created?.data?.id) await check('customFields.delete(created)', () => admin.customFields.delete(created.data.id));
    if (created2?.data?.id) await check('customFields.delete(created container)', () => admin.customFields.delete(created2.data.id));
  }

  if (shipDefId) await check('customFieldDefinitions.delete(id)', () => admin.customFieldDefinitions.delete(shipDefId));
  if (contDefId) await check('customFieldDefinitions.delete(container def)', () => admin.customFieldDefinitions.delete(contDefId));
  if (enumDefId) await check('customFieldDefinitions.delete(enum def)', () => admin.customFieldDefinitions.delete(enumDefId));
  if (shipDefId) await expectError('customFieldDefinitions.get(deleted)', () => admin.customFieldDefinitions.get(shipDefId), sdk.NotFoundError, 404);

  // Shipping lines and metro areas
  const lines = await check('listShippingLines()', () => admin.listShippingLines(), isList('shipping_line'));
  await check('shippingLines.list(undefined, { format: "mapped" })', () => admin.shippingLines.list(undefined, { format: 'mapped' }), (r) => assert(Array.isArray(r) && r.length > 0 && r[0].scac, 'no mapped lines'));
  const scac = lines?.data?.[0]?.attributes?.scac;
  if (scac) await check('listShippingLines(search)', () => admin.listShippingLines(scac), isList('shipping_line'));
  const lineId = lines?.data?.[0]?.id;
  if (lineId) await check('GET /shipping_lines/{id} (transport)', () => transport.executeManual(v2(`/shipping_lines/${lineId}`)), isDoc('shipping_line', lineId));

  let metroId = shipment?.data?.relationships?.destination?.data?.id;
  if (!metroId || shipment.data.relationships.destination.data.type !== 'metro_area') {
    const withMetro = (await admin.listShipments({}, { pageSize: 100 })).data.find((s) => s.relationships?.destination?.data?.type === 'metro_area');
    metroId = withMetro?.relationships.destination.data.id;
  }
  if (metroId) {
    const metro = await check('metroAreas.get(id)', () => admin.metroAreas.get(metroId), isDoc('metro_area', metroId));
    const code = metro?.data?.attributes?.code;
    if (code) await check('metroAreas.get(UN/LOCODE)', () => admin.metroAreas.get(code), isDoc('metro_area', metroId));
  }
  else { failures++; console.log('FAIL metroAreas.get(id): no shipment has a metro area destination'); }
  await expectError('metroAreas.get(unknown)', () => admin.metroAreas.get('00000000-0000-4000-8000-000000000000'), sdk.NotFoundError, 404);

  // Webhooks and webhook notifications (issue 17): the SDK's six webhook and
  // three notification methods. The URL is a public address literal: the
  // server refuses private ones and needs no DNS for it.
  const hookBody = (attributes) => ({ data: { type: 'webhook', attributes } });
  const hook = await check('webhooks.create(payload)', () => admin.webhooks.create(hookBody({ url: 'https://93.184.216.34/sdk-check', active: true, events: ['container.updated', 'container.transport.available'], headers: [{ name: 'x-sdk-check', value: stamp }] })), (d) => {
    isDoc('webhook')(d);
    assert(/^[0-9a-f]{64}$/.test(d.data.attributes.secret ?? ''), 'no secret in the create answer');
  });
  const hookId = hook?.data?.id;
  await check('webhooks.list()', () => admin.webhooks.list(), (d) => {
    isList('webhook')(d);
    assert(d.data.every((w) => w.attributes.secret === null), 'a listed webhook shows its secret');
  });
  if (hookId) {
    await check('webhooks.get(id)', () => admin.webhooks.get(hookId), isDoc('webhook', hookId));
    await expectError('webhooks.get as viewer', () => viewer.webhooks.get(hookId), sdk.AuthorizationError, 403);
    await expectError('webhooks.get(other account)', () => other.webhooks.get(hookId), sdk.NotFoundError, 404);
  }
  // (Private addresses are allowed here, for the tracking part's receiver.)
  await expectError('webhooks.create(ftp URL)', () => admin.webhooks.create(hookBody({ url: 'ftp://93.184.216.34/sdk-check', events: ['container.updated'] })), sdk.ValidationError ?? sdk.Terminal49Error, 422);
  await check('webhooks.ips()', () => admin.webhooks.ips(), (d) => assert(Array.isArray(d?.webhook_notification_ips), 'no webhook_notification_ips'));
  await check('webhookNotifications.list()', () => admin.webhookNotifications.list(), isList('webhook_notification', 0));
  await check('webhookNotifications.examples("container.updated")', () => admin.webhookNotifications.examples('container.updated'), (d) => {
    isList('webhook_notification')(d);
    assert(d.data[0].attributes.event === 'container.updated', 'example of another event');
  });
  // A notification to get: the delivery raises them from changes; the
  // demo activity changes containers every 4 s. Wait for one, briefly.
  let noteId;
  for (let i = 0; i < 20 && !noteId; i++) {
    noteId = (await admin.webhookNotifications.list().catch(() => undefined))?.data?.[0]?.id;
    if (!noteId) await new Promise((r) => setTimeout(r, 500));
  }
  if (noteId) await check('webhookNotifications.get(id)', () => admin.webhookNotifications.get(noteId), isDoc('webhook_notification', noteId));
  else console.log('SKIP webhookNotifications.get(id): no notification was raised (no delivery running, or the webhook saw no change)');
  if (hookId) {
    await check('webhooks.update(id, payload)', () => admin.webhooks.update(hookId, hookBody({ active: false })), (d) => {
      isDoc('webhook', hookId)(d);
      assert(d.data.attributes.active === false, 'still active');
    });
    await check('webhooks.delete(id)', () => admin.webhooks.delete(hookId));
    await expectError('webhooks.get(deleted)', () => admin.webhooks.get(hookId), sdk.NotFoundError, 404);
  }

  // Documents and email submissions: no SDK method in 0.4.0.
  const docs = await check('GET /documents (transport)', () => transport.executeManual(v2('/documents?include=shipments&page[size]=5')), isList('document'));
  await check('GET /documents/types (transport)', () => transport.executeManual(v2('/documents/types')), (d) => assert(Array.isArray(d?.document_types) && d.document_types.length > 0, 'no document_types'));
  const docId = docs?.data?.[0]?.id;
  if (docId) {
    await check('GET /documents/{id} (transport)', () => transport.executeManual(v2(`/documents/${docId}`)), isDoc('document', docId));
    await check('PATCH /documents/{id} (transport)', () => transport.executeManual(v2(`/documents/${docId}`), json('PATCH', { data: { type: 'document', attributes: { document_type_manual: 'commercial_invoice' } } })), isDoc('document', docId));
    await check('DELETE /documents/{id} (transport)', () => transport.executeManual(v2(`/documents/${docId}`), { method: 'DELETE' }));
  }
  const subs = await check('GET /email_submissions (transport)', () => transport.executeManual(v2('/email_submissions')), isList('email_submission'));
  const subId = subs?.data?.[0]?.id;
  if (subId) await check('GET /email_submissions/{id} (transport)', () => transport.executeManual(v2(`/email_submissions/${subId}`)), isDoc('email_submission', subId));
}

// ---- the tracking half, against the carrier simulator ----
const settledStatuses = ['created', 'awaiting_manifest', 'failed', 'tracking_stopped'];
// untilSettled polls getTrackingRequest until the poller has moved the
// request out of pending, at most SDK_CHECK_TRACK_TIMEOUT after t0 (when
// the create answered); every 100 ms, then every 500 ms after 2 s.
async function untilSettled(client, id, t0) {
  let polls = 0;
  for (;;) {
    const doc = await client.getTrackingRequest(id);
    polls++;
    const status = doc?.data?.attributes?.status;
    const ms = performance.now() - t0;
    if (settledStatuses.includes(status)) return { doc, ms, polls };
    if (ms > trackTimeoutMs) throw new Error(`still ${status} after ${(ms / 1000).toFixed(1)} s (${polls} polls): ${JSON.stringify(doc?.data?.attributes)}`);
    await sleep(ms < 2000 ? 100 : 500);
  }
}
const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;

// A webhook receiver on 127.0.0.1: keeps every delivery.
function startReceiver() {
  const got = [];
  const srv = createHttpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      let doc;
      try { doc = JSON.parse(body); } catch { /* kept as text */ }
      got.push({ at: performance.now(), signature: req.headers['x-t49-webhook-signature'], body, doc });
      res.writeHead(204).end();
    });
  });
  return new Promise((ok) => srv.listen(0, '127.0.0.1', () => ok({ srv, got, url: `http://127.0.0.1:${srv.address().port}/sdk-check` })));
}

async function trackingCalls({ admin, viewer, other, carrier, stamp }) {
  if (carrier.error) throw carrier.error;
  const all = await (await fetch(`${carrier.base}/sim/numbers`)).json();
  const known = new Set(all.map((n) => n.request_number));
  const tracked = all.filter((n) => n.state === 'tracked');
  const pick = (type, pred = () => true) => tracked.find((n) => n.request_type === type && pred(n));
  // A bill of lading whose voyage is still under way (an event planned or
  // estimated in the future), and one whose containers all came back empty
  // (tracking stops at once): the simulator's own events tell.
  const simEvents = async (scac, query) => {
    const r = await fetch(`${carrier.base}/${scac}/v2/events?${query}&limit=1000`);
    return r.ok ? r.json() : [];
  };
  const now = Date.now();
  let bol;
  let finished;
  for (const n of tracked.filter((x) => x.request_type === 'bill_of_lading').slice(0, 60)) {
    const events = await simEvents(n.scac, `transportDocumentReference=${encodeURIComponent(n.request_number)}`);
    const future = events.some((e) => e.eventClassifierCode !== 'ACT' && Date.parse(e.eventDateTime) > now);
    const returned = events.filter((e) => e.equipmentEventTypeCode === 'GTIN' && e.emptyIndicatorCode === 'EMPTY').length;
    const containers = new Set(events.map((e) => e.equipmentReference).filter(Boolean)).size;
    if (future && !bol) bol = n;
    if (!future && containers > 0 && returned >= containers && !finished) finished = n;
    if (bol && finished) break;
  }
  if (!bol) throw new Error(`the simulator lists no tracked bill of lading under way (${all.length} numbers)`);
  const booking = pick('booking_number', (n) => n.scac !== bol.scac);
  const awaiting = all.find((n) => n.state === 'awaiting_manifest' && n.request_type === 'booking_number');
  const inferBol = pick('bill_of_lading', (n) => n.scac !== bol.scac && n.scac !== booking?.scac);
  // A container with a rail leg, for getRailMilestones: the simulator's own
  // events tell (a transport call by RAIL). Any tracked container otherwise.
  let rail;
  for (const n of tracked.filter((x) => x.request_type === 'container').slice(0, 80)) {
    const events = await simEvents(n.scac, `equipmentReference=${encodeURIComponent(n.request_number)}`);
    if (events.some((e) => e.transportCall?.modeOfTransport === 'RAIL')) { rail = n; break; }
  }
  const container = rail ?? pick('container');
  const inferContainer = pick('container', (n) => n.scac !== container?.scac);
  const prefix = bol.request_number.replace(/\d+$/, '');
  let unknown;
  for (let i = 1; !unknown; i++) { const n = `${prefix}${String(i).padStart(9, '0')}`; if (!known.has(n)) unknown = n; }

  // A webhook for the tracking request events, to a receiver here.
  receiver = await startReceiver();
  const hookOf = (events) => () => admin.webhooks.create({ data: { type: 'webhook', attributes: { url: receiver.url, active: true, events } } });
  let hookEvents = ['tracking_request.succeeded', 'tracking_request.failed', 'tracking_request.awaiting_manifest', 'tracking_request.tracking_stopped'];
  let hook = await check('webhooks.create(http://127.0.0.1 receiver, tracking_request.*)', hookOf(hookEvents), isDoc('webhook'));
  if (!hook) { // refused: still listen for succeeded
    hookEvents = ['tracking_request.succeeded'];
    hook = await check('webhooks.create(http://127.0.0.1 receiver, tracking_request.succeeded)', hookOf(hookEvents), isDoc('webhook'));
  }

  // Create: each request starts its clock when the create answers.
  const requests = [];
  const create = async (label, call, expect, number) => {
    const t0 = performance.now();
    const doc = await check(label, call, (d) => {
      isDoc('tracking_request')(d);
      const a = d.data.attributes;
      assert(['pending', ...settledStatuses].includes(a.status), `status ${a.status}`);
      assert(a.request_number === number.request_number && a.request_type === number.request_type && a.scac === number.scac,
        `request ${a.request_type} ${a.request_number} ${a.scac}, want ${number.request_type} ${number.request_number} ${number.scac}`);
    }, (d) => `${d.data.attributes.status}`);
    if (!doc) return undefined;
    const req = { label, expect, number, id: doc.data.id, t0 };
    req.wait = untilSettled(admin, req.id, t0).then((v) => ({ v }), (e) => ({ e }));
    requests.push(req);
    return req;
  };
  const bolReq = await create(`createTrackingRequest(bill_of_lading ${bol.request_number} ${bol.scac})`,
    () => admin.createTrackingRequest({ requestType: 'bill_of_lading', requestNumber: bol.request_number, scac: bol.scac, refNumbers: [`PO-${stamp}`], shipmentTags: ['sdk-check'] }), 'created', bol);
  const contReq = container && await create(`trackContainer(${container.request_number} ${container.scac}${rail ? ', rail leg' : ''})`,
    () => admin.trackContainer({ containerNumber: container.request_number, scac: container.scac }), 'created', container);
  const bookReq = booking && await create(`createTrackingRequest(booking_number ${booking.request_number} ${booking.scac})`,
    () => admin.createTrackingRequest({ requestType: 'booking_number', requestNumber: booking.request_number, scac: booking.scac }), 'created', booking);
  const awaitReq = awaiting && await create(`createTrackingRequest(booking_number ${awaiting.request_number} ${awaiting.scac}, not yet manifested)`,
    () => admin.createTrackingRequest({ requestType: 'booking_number', requestNumber: awaiting.request_number, scac: awaiting.scac }), 'awaiting_manifest', awaiting);
  const finishedReq = finished && await create(`createTrackingRequest(bill_of_lading ${finished.request_number} ${finished.scac}, every container returned empty)`,
    () => admin.createTrackingRequest({ requestType: 'bill_of_lading', requestNumber: finished.request_number, scac: finished.scac }), 'tracking_stopped', finished);
  const unknownNumber = { request_number: unknown, request_type: 'bill_of_lading', scac: bol.scac };
  const unknownReq = await create(`createTrackingRequest(bill_of_lading ${unknown} ${bol.scac}, unknown to the carrier)`,
    () => admin.createTrackingRequest({ requestType: 'bill_of_lading', requestNumber: unknown, scac: bol.scac }), 'failed', unknownNumber);

  // infer_number, and a request from its answer.
  if (inferContainer) {
    await check(`inferTrackingNumber(${inferContainer.request_number})`, () => admin.inferTrackingNumber(inferContainer.request_number), (d) => {
      const a = d?.data?.attributes;
      assert(d?.data?.type === 'infer_number_results', `type ${d?.data?.type}`);
      assert(a?.number_type === 'container', `number_type ${a?.number_type}`);
      assert(a.validation?.check_digit_passed === true, `validation ${JSON.stringify(a.validation)}`);
      const scacs = [a.shipping_line?.selected?.scac, ...(a.shipping_line?.candidates ?? []).map((c) => c.scac)];
      assert(scacs.includes(inferContainer.scac), `shipping_line ${JSON.stringify(a.shipping_line)}, want ${inferContainer.scac}`);
    }, (d) => `${d.data.attributes.shipping_line.decision} ${d.data.attributes.shipping_line.selected?.scac ?? '-'}`);
    const t0 = performance.now();
    const fromInfer = await check(`createTrackingRequestFromInfer(${inferContainer.request_number})`, () => admin.createTrackingRequestFromInfer(inferContainer.request_number), (r) => {
      isDoc('tracking_request')(r?.trackingRequest);
      const a = r.trackingRequest.data.attributes;
      assert(a.request_type === 'container' && a.scac === inferContainer.scac && a.request_number === inferContainer.request_number, `request ${a.request_type} ${a.request_number} ${a.scac}`);
    });
    if (fromInfer) {
      const req = { label: `createTrackingRequestFromInfer(${inferContainer.request_number})`, expect: 'created', id: fromInfer.trackingRequest.data.id, t0 };
      req.wait = untilSettled(admin, req.id, t0).then((v) => ({ v }), (e) => ({ e }));
      requests.push(req);
    }
  }
  if (inferBol) await check(`inferTrackingNumber(${inferBol.request_number})`, () => admin.inferTrackingNumber(inferBol.request_number), (d) => {
    const a = d?.data?.attributes;
    assert(a?.number_type === 'bill_of_lading', `number_type ${a?.number_type}`);
    const scacs = [a.shipping_line?.selected?.scac, ...(a.shipping_line?.candidates ?? []).map((c) => c.scac)];
    assert(scacs.includes(inferBol.scac), `shipping_line ${JSON.stringify(a.shipping_line)}, want ${inferBol.scac}`);
  }, (d) => `${d.data.attributes.shipping_line.decision} ${d.data.attributes.shipping_line.selected?.scac ?? '-'}`);

  // Wait for the poller: one line per request, with the time it took.
  for (const req of requests) {
    await check(`getTrackingRequest(id) until ${req.expect}: ${req.label}`, async () => {
      const { v, e } = await req.wait;
      if (e) throw e;
      return v;
    }, ({ doc }) => {
      const a = doc.data.attributes;
      const t = doc.data.relationships?.tracked_object?.data;
      if (t?.type === 'shipment') req.shipmentId = t.id; // the later checks go on with it
      assert(a.status === req.expect, `status ${a.status} (failed_reason ${a.failed_reason}, is_retrying ${a.is_retrying}, retry_count ${a.retry_count}, tracked_object ${JSON.stringify(t)}), want ${req.expect}`);
      if (req.expect === 'created' || req.expect === 'tracking_stopped') assert(t?.type === 'shipment' && t.id, `tracked_object ${JSON.stringify(t)}`);
      req.status = a.status;
      if (req.expect === 'failed') assert(a.failed_reason === 'not_found', `failed_reason ${a.failed_reason}, want not_found`);
    }, ({ ms, polls }) => `${secs(ms)}, ${polls} polls`);
  }

  // The shipment and containers the poller made from the bill of lading.
  let containerIds = [];
  if (bolReq?.shipmentId) {
    const sid = bolReq.shipmentId;
    const ship = await check('getShipment(tracked_object id)', () => admin.getShipment(sid), (d) => {
      isDoc('shipment', sid)(d);
      assert(d.data.attributes.bill_of_lading_number === bol.request_number, `bill_of_lading_number ${d.data.attributes.bill_of_lading_number}`);
      assert(d.data.attributes.shipping_line_scac === bol.scac, `shipping_line_scac ${d.data.attributes.shipping_line_scac}`);
      assert(d.data.relationships?.containers?.data?.length > 0, 'no containers');
      assert(d.data.attributes.port_of_lading_locode && d.data.attributes.port_of_discharge_locode, `ports ${d.data.attributes.port_of_lading_locode} → ${d.data.attributes.port_of_discharge_locode}`);
    }, (d) => `${d.data.relationships.containers.data.length} containers, ${d.data.attributes.port_of_lading_locode} → ${d.data.attributes.port_of_discharge_locode}, vessel ${d.data.attributes.pod_vessel_name}`);
    containerIds = ship?.data?.relationships?.containers?.data?.map((c) => c.id) ?? [];
    await check('shipments.get(id, true, { format: "mapped" })', () => admin.shipments.get(sid, true, { format: 'mapped' }), (m) => {
      assert(m.id === sid && m.containers?.length === containerIds.length, `mapped id ${m.id}, ${m.containers?.length} containers`);
      assert(m.containers.every((c) => c.number), 'a mapped container without number');
    });
  }
  if (containerIds.length) {
    await check('listContainers() lists the new containers', () => admin.listContainers({}, { pageSize: 100 }), (d) => {
      isList('container')(d);
      const listed = new Set(d.data.map((c) => c.id));
      assert(containerIds.every((id) => listed.has(id)), 'a new container is not on the first page (newest first)');
    });
    const cid = containerIds[0];
    const events = await check('getContainerTransportEvents(id, { format: "both" })', () => admin.getContainerTransportEvents(cid, { format: 'both' }), both((r) => {
      isList('transport_event')(r.raw);
      assert(r.mapped.length === r.raw.data.length, `${r.mapped.length} mapped of ${r.raw.data.length}`);
      const bad = r.mapped.find((e) => !e.event?.startsWith('container.transport.'));
      assert(!bad, `event ${bad?.event}`);
      assert(r.mapped.some((e) => e.location?.locode), 'no mapped event has a location (include=location)');
    }), (r) => `${r.mapped.length} events: ${[...new Set(r.mapped.map((e) => e.event.replace('container.transport.', '')))].join(', ')}`);
    await check('getContainerRawEvents(id)', () => admin.getContainerRawEvents(cid), (d) => {
      isList('raw_event')(d);
      const bad = d.data.find((e) => typeof e.attributes?.event !== 'string' || !e.attributes.event);
      assert(!bad, `raw event without event: ${JSON.stringify(bad)?.slice(0, 200)}`);
    }, (d) => `${d.data.length} raw events`);
    await check('getContainerRoute(id, { format: "both" })', () => admin.getContainerRoute(cid, { format: 'both' }), both((r) => {
      assert(r.raw?.data?.type === 'route', `type ${r.raw?.data?.type}`);
      assert(r.mapped.totalLegs >= 2, `${r.mapped.totalLegs} legs`);
      assert(r.mapped.locations.every((l) => l.port?.code), 'a leg without its port');
      assert(r.mapped.locations.some((l) => l.outbound.vessel?.name || l.inbound.vessel?.name), 'no leg has a vessel');
    }), (r) => `${r.mapped.totalLegs} legs: ${r.mapped.locations.map((l) => l.port.code).join(' → ')}`);
    await check('containers.map(id) (map_geojson)', () => admin.containers.map(cid), (d) => {
      assert(d?.type === 'FeatureCollection' && Array.isArray(d.features) && d.features.length > 0, `not a FeatureCollection with features: ${JSON.stringify(d)?.slice(0, 200)}`);
    }, (d) => `${d.features.length} features`);
    await check('refreshContainer(id)', () => admin.refreshContainer(cid), (d) => assert(typeof d?.message === 'string' && d.message, `no message: ${JSON.stringify(d)}`), (d) => d.message);
    await expectError('refreshContainer(other account\'s id)', () => other.refreshContainer(cid), sdk.NotFoundError, 404);

    // A vessel met in the events.
    const vesselId = events?.raw?.data?.map((e) => e.relationships?.vessel?.data?.id).find(Boolean);
    if (vesselId) {
      const vessel = await check('getVessel(id from an event)', () => admin.getVessel(vesselId), (d) => {
        isDoc('vessel', vesselId)(d);
        assert(/^\d{7}$/.test(d.data.attributes.imo ?? ''), `imo ${d.data.attributes.imo}`);
        assert(d.data.attributes.name, 'no name');
      }, (d) => `${d.data.attributes.name}, IMO ${d.data.attributes.imo}`);
      const imo = vessel?.data?.attributes?.imo;
      if (imo) await check('getVesselByImo(imo)', () => admin.getVesselByImo(imo), isDoc('vessel', vesselId));
    } else { failures++; console.log('FAIL getVessel(id from an event): no transport event of the container names a vessel'); }
  }

  // The container request: its container, and rail milestones.
  if (contReq?.shipmentId) {
    const ship = await check('getShipment(trackContainer\'s tracked_object)', () => admin.getShipment(contReq.shipmentId), isDoc('shipment', contReq.shipmentId));
    const cont = ship?.included?.find((i) => i.type === 'container' && i.attributes?.number === container.request_number);
    if (!cont) { failures++; console.log(`FAIL trackContainer: the shipment does not include container ${container.request_number}`); }
    else await check(`getRailMilestones(id)${rail ? ' (a rail leg)' : ''}`, () => admin.getRailMilestones(cont.id), (m) => {
      assert(m.container_id === cont.id, `container_id ${m.container_id}`);
      const keys = ['pod_rail_carrier_scac', 'ind_rail_carrier_scac', 'pod_rail_loaded_at', 'pod_rail_departed_at', 'ind_rail_arrived_at', 'ind_rail_unloaded_at', 'ind_eta_at', 'ind_ata_at'];
      if (rail) assert(keys.some((k) => m[k]), `no rail milestone set: ${JSON.stringify(m)}`);
    }, (m) => `${['pod_rail_loaded_at', 'pod_rail_departed_at', 'ind_eta_at', 'ind_ata_at'].map((k) => `${k} ${m[k] ?? '-'}`).join(', ')}; rail_events ${m.rail_events.length} (the SDK keeps events named rail.*)`);
  }
  if (bookReq?.shipmentId) await check('getShipment(booking request\'s tracked_object)', () => admin.getShipment(bookReq.shipmentId), (d) => {
    isDoc('shipment', bookReq.shipmentId)(d);
    assert(d.data.relationships?.containers?.data?.length > 0, 'no containers');
  });

  // The requests themselves.
  if (bolReq) {
    const id = bolReq.id;
    await check('listTrackingRequests({ "filter[request_number]" })', () => admin.listTrackingRequests({ 'filter[request_number]': bol.request_number }), (d) => {
      isList('tracking_request')(d);
      assert(d.data.length === 1 && d.data[0].id === id, `${d.data.length} listed: ${d.data.map((r) => r.id).join(',')}`);
    });
    await check('listTrackingRequests({ "filter[status]": "failed" })', () => admin.listTrackingRequests({ 'filter[status]': 'failed' }), (d) => {
      isList('tracking_request', unknownReq?.status === 'failed' ? 1 : 0)(d);
      assert(d.data.every((r) => r.attributes.status === 'failed'), 'a request of another status');
      if (unknownReq?.status === 'failed') assert(d.data.some((r) => r.id === unknownReq.id), 'the failed request is not listed');
    });
    await check('listTrackingRequests({}, { format: "mapped", pageSize: 10 })', () => admin.listTrackingRequests({}, { format: 'mapped', pageSize: 10 }), (r) => {
      assert(r.items?.length > 0 && r.items.length <= 10, `${r.items?.length} items`);
      assert(r.items.every((t) => t.id && t.requestNumber && t.status && t.requestType), `an item without id/requestNumber/status: ${JSON.stringify(r.items[0])}`);
    });
    await check('getTrackingRequest(id, { format: "mapped" })', () => admin.getTrackingRequest(id, { format: 'mapped' }), (m) => {
      assert(m.id === id && m.status === (bolReq.status ?? m.status) && m.requestNumber === bol.request_number && m.requestType === 'bill_of_lading' && m.scac === bol.scac, `mapped ${JSON.stringify(m)}`);
      assert(JSON.stringify(m.refNumbers) === JSON.stringify([`PO-${stamp}`]), `refNumbers ${JSON.stringify(m.refNumbers)}`);
    });
    if (bolReq.shipmentId) await check('getTrackingRequest(id, { include: ["tracked_object"] })', () => admin.getTrackingRequest(id, { include: ['tracked_object'] }), (d) => {
      isDoc('tracking_request', id)(d);
      assert(d.included?.some((i) => i.type === 'shipment' && i.id === bolReq.shipmentId), 'the shipment is not included');
    });
    await check('updateTrackingRequest(id, { ref_numbers, tags })', () => admin.updateTrackingRequest(id, { ref_numbers: [`SDK-${stamp}`, 'B'], tags: ['sdk-check', 'tracked'] }), (d) => {
      isDoc('tracking_request', id)(d);
      assert(JSON.stringify(d.data.attributes.ref_numbers) === JSON.stringify([`SDK-${stamp}`, 'B']), `ref_numbers ${JSON.stringify(d.data.attributes.ref_numbers)}`);
      assert(JSON.stringify(d.data.attributes.tags) === JSON.stringify(['sdk-check', 'tracked']), `tags ${JSON.stringify(d.data.attributes.tags)}`);
    });
    await check('updateTrackingRequest(id, { ref_number }) (the OpenAPI\'s body)', () => admin.updateTrackingRequest(id, { ref_number: `ONE-${stamp}` }), (d) => {
      isDoc('tracking_request', id)(d);
      assert(JSON.stringify(d.data.attributes.ref_numbers) === JSON.stringify([`ONE-${stamp}`]), `ref_numbers ${JSON.stringify(d.data.attributes.ref_numbers)}`);
    });
    await expectError('createTrackingRequest(the same number again)', () => admin.createTrackingRequest({ requestType: 'bill_of_lading', requestNumber: bol.request_number, scac: bol.scac }), sdk.ValidationError, 422);
    await expectError('getTrackingRequest(other account\'s id)', () => other.getTrackingRequest(id), sdk.NotFoundError, 404);
    await expectError('updateTrackingRequest as viewer', () => viewer.updateTrackingRequest(id, { tags: ['x'] }), sdk.AuthorizationError, 403);
  }
  await expectError('createTrackingRequest as viewer', () => viewer.createTrackingRequest({ requestType: 'bill_of_lading', requestNumber: inferBol?.request_number ?? unknown, scac: bol.scac }), sdk.AuthorizationError, 403);
  await expectError('createTrackingRequest(unknown scac)', () => admin.createTrackingRequest({ requestType: 'bill_of_lading', requestNumber: unknown, scac: 'ZZZZ' }), sdk.ValidationError, 422);
  await expectError('trackContainer(bad check digit)', () => admin.trackContainer({ containerNumber: container ? container.request_number.slice(0, 10) + ((Number(container.request_number[10]) + 1) % 10) : 'MSKU1234560', scac: container?.scac ?? bol.scac }), sdk.ValidationError, 422);

  // The webhook heard the requests' outcomes.
  const hookId = hook?.data?.id;
  if (hookId) {
    const secret = hook.data.attributes.secret;
    const heard = (event, reqId) => receiver.got.find((g) => g.doc?.data?.attributes?.event === event &&
      (g.doc.data.relationships?.reference_object?.data?.id === reqId || g.doc.included?.some((i) => i.type === 'tracking_request' && i.id === reqId)));
    // A request whose shipment is over at once still succeeded: the
    // shipment exists (then tracking_stopped).
    const expected = [['tracking_request.succeeded', bolReq], ['tracking_request.failed', unknownReq], ['tracking_request.awaiting_manifest', awaitReq],
      ['tracking_request.succeeded', finishedReq], ['tracking_request.tracking_stopped', finishedReq]].filter(([e, r]) => r && hookEvents.includes(e));
    for (const [event, req] of expected) {
      await check(`webhook delivery: ${event} for ${req.number.request_number}`, async () => {
        const deadline = performance.now() + trackTimeoutMs;
        let g;
        while (!(g = heard(event, req.id)) && performance.now() < deadline) await sleep(100);
        if (!g) throw new Error(`not delivered within ${trackTimeoutMs / 1000} s; the receiver got ${receiver.got.length}: ${receiver.got.map((x) => x.doc?.data?.attributes?.event).join(', ')}`);
        return g;
      }, (g) => {
        const want = createHmac('sha256', secret).update(g.body).digest('hex');
        assert(g.signature === want, 'X-T49-Webhook-Signature does not match the body');
      }, (g) => `${secs(g.at - req.t0)} after the create`);
    }
    await check('webhooks.delete(receiver)', () => admin.webhooks.delete(hookId));
  }
}

let code = 0;
try {
  await main();
} catch (e) {
  console.log(`FAIL setup: ${e?.stack ?? e}`);
  code = 1;
} finally {
  await cleanup();
}
if (failures) console.log(`${failures} failed`);
process.exit(code || (failures ? 1 : 0));

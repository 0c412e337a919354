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
// The webhook methods (webhooks.*, webhookNotifications.*) need no setting:
// the webhook URL is a public address literal.
//
// The SDK's own methods are used wherever 0.4.0 has one. It has none for
// documents, email submissions or a single shipping line: those calls go
// through the SDK's request pipeline (Transport.executeManual: the same
// auth header, retries and error mapping as its public methods) and are
// marked "(transport)".
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
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
const dataDir = mkdtempSync(join(tmpdir(), 'shipgraph-sdk-check-'));
let server;

async function cleanup() {
  if (server && server.exitCode === null) {
    const done = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await Promise.race([done, new Promise((r) => setTimeout(r, 15000))]);
  }
  rmSync(dataDir, { recursive: true, force: true });
}
process.on('SIGINT', async () => { await cleanup(); process.exit(130); });

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

async function startServer() {
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
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout.on('data', (d) => { log += d; });
  server.stderr.on('data', (d) => { log += d; });
  for (let i = 0; i < 600; i++) {
    if (server.exitCode !== null) throw new Error(`serve exited ${server.exitCode}\n${log}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return { base, keys }; // ready: the database answers
    } catch { /* not up yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server not healthy after 60s\n${log}`);
}

// ---- reporting ----
let failures = 0;
function describe(e) {
  const status = e?.status ?? '-';
  const detail = e?.details?.errors?.[0];
  const extra = detail ? ` ${JSON.stringify({ status: detail.status, title: detail.title, detail: detail.detail, source: detail.source })}` : '';
  return `${status} ${e?.name ?? 'Error'}: ${e?.message ?? e}${extra}`;
}
// check runs one SDK call; verify(result) throws when the answer is not what
// an SDK user would expect. Returns the result, or undefined on failure.
async function check(name, call, verify = () => {}) {
  try {
    const result = await call();
    verify(result);
    console.log(`OK   ${name}`);
    return result;
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${describe(e)}`);
    return undefined;
  }
}
// expectError: the call must be refused with this SDK error class.
async function expectError(name, call, cls, status) {
  try {
    await call();
    failures++;
    console.log(`FAIL ${name}: succeeded, expected ${cls.name} ${status}`);
  } catch (e) {
    if (e instanceof cls && e.status === status) console.log(`OK   ${name} (${cls.name} ${status})`);
    else { failures++; console.log(`FAIL ${name}: expected ${cls.name} ${status}, got ${describe(e)}`); }
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
  const { base, keys } = await startServer();
  const admin = new Terminal49Client({ apiToken: keys['acme admin'], apiBaseUrl: base, maxRetries: 0 });
  const viewer = new Terminal49Client({ apiToken: keys['acme viewer'], apiBaseUrl: base, maxRetries: 0 });
  const other = new Terminal49Client({ apiToken: keys['globex admin'], apiBaseUrl: base, maxRetries: 0 });
  // The SDK's request pipeline, for the resources 0.4.0 has no method for.
  const transport = admin.transport;
  const v2 = (path) => `${transport.baseUrl}${path}`;
  const json = (method, body) => ({ method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const stamp = Date.now().toString(36);

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
  await expectError('webhooks.create(private URL)', () => admin.webhooks.create(hookBody({ url: 'https://169.254.169.254/latest', events: ['container.updated'] })), sdk.ValidationError ?? sdk.Terminal49Error, 422);
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

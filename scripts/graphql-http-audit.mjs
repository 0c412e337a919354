// GraphQL-over-HTTP conformance audit of a running server, using
// graphql-http's auditServer. Run through scripts/graphql-http-audit.sh,
// which installs the pinned packages next to a copy of this file (ESM
// resolves imports relative to the file, not NODE_PATH).
//
//   node audit.mjs URL [AUTH_HEADER_VALUE]   audit URL
//   node audit.mjs --self-test               audit graphql-http's own reference
//                                            server on 127.0.0.1 (expect all OK)
//
// Output: one "OK|WARN|FAIL|NOTE <id> <name>" line per audit (with the
// reason indented below non-OK ones), then exactly
// "graphql-http audit: N ok, N warn, N fail". Exit 1 if a MUST failed or,
// unless AUDIT_ALLOW_WARN=1, a SHOULD warned; exit 2 if the audit could not
// run at all. NOTE marks failed MAY audits: optional, never fatal.
import http from 'node:http';
import { auditServer } from 'graphql-http';

const label = { ok: 'OK', warn: 'WARN', error: 'FAIL', notice: 'NOTE' };

async function audit(url, authorization) {
  // Every audit request carries the API key: the gateway rejects anonymous
  // requests, which would otherwise fail every audit for the wrong reason.
  const fetchFn = (input, init = {}) => {
    const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
    if (authorization) headers.set('Authorization', authorization);
    return fetch(input, { ...init, headers });
  };
  const results = await auditServer({ url, fetchFn });
  const count = { ok: 0, warn: 0, error: 0, notice: 0 };
  for (const r of results) {
    count[r.status]++;
    console.log(`${label[r.status] ?? r.status.toUpperCase()} ${r.id} ${r.name}`);
    if (r.status !== 'ok') {
      let body = '';
      try { body = (await r.response.text()).slice(0, 300).replace(/\s+/g, ' '); } catch { /* body already read */ }
      console.log(`    reason: ${r.reason}${r.response ? ` (HTTP ${r.response.status}${body ? `: ${body}` : ''})` : ''}`);
    }
  }
  if (count.notice > 0) console.log(`(${count.notice} optional MAY audits not met; informational)`);
  console.log(`graphql-http audit: ${count.ok} ok, ${count.warn} warn, ${count.error} fail`);
  const allowWarn = process.env.AUDIT_ALLOW_WARN === '1';
  return count.error > 0 || (count.warn > 0 && !allowWarn) ? 1 : 0;
}

// The reference server: graphql-http's own handler with a trivial schema,
// behind the same "Authorization: Token <key>" gate as the gateway, so the
// self-test also proves the header reaches the server.
async function selfTest() {
  const { GraphQLSchema, GraphQLObjectType, GraphQLString } = await import('graphql');
  const { createHandler } = await import('graphql-http/lib/use/http');
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({
      name: 'Query',
      fields: { hello: { type: GraphQLString, resolve: () => 'world' } },
    }),
  });
  const handler = createHandler({ schema });
  const auth = 'Token self-test-key';
  const server = http.createServer((req, res) => {
    if (req.headers.authorization !== auth) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: [{ message: 'missing or wrong API key' }] }));
      return;
    }
    if (!req.url.startsWith('/graphql')) {
      res.writeHead(404).end();
      return;
    }
    handler(req, res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await audit(`http://127.0.0.1:${server.address().port}/graphql`, auth);
  } finally {
    server.close();
  }
}

const [arg, authArg] = process.argv.slice(2);
try {
  if (arg === '--self-test') {
    process.exitCode = await selfTest();
  } else {
    process.exitCode = await audit(arg, authArg ?? process.env.GRAPHQL_AUDIT_AUTHORIZATION ?? '');
  }
} catch (err) {
  // auditServer throws only on fatal problems (server unreachable, ...);
  // fetch hides the useful part (ECONNREFUSED, ...) in err.cause.
  const cause = err?.cause ? ` (${err.cause.message ?? err.cause})` : '';
  console.error(`graphql-http audit could not run: ${err?.message ?? err}${cause}`);
  if (process.env.AUDIT_DEBUG === '1') console.error(err?.stack);
  process.exitCode = 2;
}

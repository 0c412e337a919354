// The trusted documents check of scripts/trusted-documents.sh.
//   generate DIR OUT   runs @apollo/generate-persisted-query-manifest (its
//                      CLI, unmodified) on DIR/**/*.graphql, writes OUT
//   client URL MANIFEST OPERATIONS_JSON
//                      runs the operations ([{name, variables}]) with Apollo
//                      Client's PersistedQueryLink, ids from the manifest
//                      (@apollo/persisted-query-lists), once over POST and
//                      once over GET; prints one JSON line per answer
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const [mode, ...args] = process.argv.slice(2);

if (mode === "generate") {
  const [dir, out] = args.map((p) => resolve(p));
  const config = join(here, "persisted-query-manifest.config.json");
  writeFileSync(config, JSON.stringify({ documents: [join(dir, "**/*.graphql")], output: out }));
  execFileSync(join(here, "node_modules/.bin/generate-persisted-query-manifest"), ["--config", config], { stdio: "inherit", cwd: here });
} else if (mode === "client") {
  const [url, manifestPath, opsJSON] = args;
  const { ApolloClient, InMemoryCache, HttpLink, gql } = await import("@apollo/client");
  const { PersistedQueryLink } = await import("@apollo/client/link/persisted-queries");
  const { generatePersistedQueryIdsFromManifest } = await import("@apollo/persisted-query-lists");
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  const byName = Object.fromEntries(manifest.operations.map((op) => [op.name, op]));
  const authorization = process.env.SHIPGRAPH_AUTHORIZATION || "";
  for (const useGET of [false, true]) {
    const client = new ApolloClient({
      cache: new InMemoryCache(),
      link: new PersistedQueryLink({
        ...generatePersistedQueryIdsFromManifest({ loadManifest: () => Promise.resolve(manifest) }),
        useGETForHashedQueries: useGET,
      }).concat(new HttpLink({ uri: url, headers: { authorization } })),
    });
    for (const { name, variables } of JSON.parse(opsJSON)) {
      if (!byName[name]) throw new Error(`operation ${name} is not in the manifest`);
      let line;
      try {
        const res = await client.query({ query: gql(byName[name].body), variables, fetchPolicy: "no-cache" });
        line = { name, method: useGET ? "GET" : "POST", data: res.data ?? null, error: res.error ? String(res.error) : null };
      } catch (e) {
        line = { name, method: useGET ? "GET" : "POST", data: null, error: String(e) };
      }
      console.log(JSON.stringify(line));
    }
  }
} else {
  console.error("usage: generate DIR OUT | client URL MANIFEST OPERATIONS_JSON");
  process.exit(2);
}

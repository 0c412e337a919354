// The build of the operations page; see scripts/build-ops.sh.
//   node build-ops.mjs REPO_ROOT
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync, symlinkSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const root = process.argv[2];
const web = join(root, "web/ops");
const out = join(web, "dist");
mkdirSync(out, { recursive: true });

// 1. Every operation validates against the schema the binary serves, so a
// stale page fails the build, not the person using it.
const { buildSchema, parse, validate } = await import("graphql");
const schema = buildSchema(readFileSync(join(root, "schema.graphqls"), "utf8"), { assumeValidSDL: true });
const opsDir = join(web, "operations");
let failed = false;
for (const f of readdirSync(opsDir).filter((f) => f.endsWith(".graphql")).sort()) {
  const errors = validate(schema, parse(readFileSync(join(opsDir, f), "utf8")));
  for (const e of errors) {
    console.error(`${f}: ${e.message}`);
    failed = true;
  }
}
if (failed) process.exit(1);

// 2. The trusted documents manifest, by the real tool. Its bodies are what
// the server runs for each id, so the bundle sends exactly those.
const manifestPath = join(out, "persisted-query-manifest.json");
const config = join(here, "persisted-query-manifest.config.json");
writeFileSync(config, JSON.stringify({ documents: [join(opsDir, "*.graphql")], output: manifestPath + ".tmp" }));
execFileSync(join(here, "node_modules/.bin/generate-persisted-query-manifest"), ["--config", config], { stdio: "inherit", cwd: here });
const manifest = JSON.parse(readFileSync(manifestPath + ".tmp", "utf8"));
// The bundle gets {name: {id, body}} of the operations.
const operations = Object.fromEntries(manifest.operations.map((op) => [op.name, { id: op.id, body: op.body }]));
const genDir = join(here, "gen");
mkdirSync(genDir, { recursive: true });
writeFileSync(join(genDir, "operations.json"), JSON.stringify(operations));

// 3. Type-check the page's TypeScript (graphql-ws ships its types); the
// installed packages are linked where the sources look for them.
const nm = join(web, "node_modules");
let linked = false;
if (!existsSync(nm)) {
  symlinkSync(join(here, "node_modules"), nm);
  linked = true;
}
try {
  execFileSync(join(here, "node_modules/.bin/tsc"), ["--noEmit", "-p", join(web, "tsconfig.json")], { stdio: "inherit" });

  // 4. Bundle: one minified ES2020 script, the operations inlined.
  const esbuild = await import("esbuild");
  const res = await esbuild.build({
    entryPoints: [join(web, "src/main.ts")],
    bundle: true,
    minify: true,
    format: "iife",
    target: "es2020",
    legalComments: "none",
    alias: { "ops-operations": join(genDir, "operations.json") },
    outfile: join(out, "ops.js.tmp"),
    write: true,
    metafile: true,
    logLevel: "warning",
  });
  void res;
} finally {
  if (linked) execFileSync("rm", ["-f", nm]);
}
renameSync(join(out, "ops.js.tmp"), join(out, "ops.js"));
renameSync(manifestPath + ".tmp", manifestPath);
const js = readFileSync(join(out, "ops.js"));
console.log(`built web/ops/dist: ops.js ${js.length} bytes (${gzipSync(js, { level: 9 }).length} gzip), ` +
  `${manifest.operations.length} operations in persisted-query-manifest.json`);

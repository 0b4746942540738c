// Builds .gpu-bundle/: what one `device` call needs on a GPU machine that has no Node
// (test/gpu/device_run.ts bundled with the engine, the worker thread and process bundles, the built
// addon, a compressed Node binary, DuckDB's bindings for the benchmark), under the 64 MiB
// the device tool carries. Then, on the GPU machine:
//   cd .gpu-bundle && sh run.sh          (writes results to $OUT)
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = ".gpu-bundle";
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir);
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "warning",
  // Packages with native parts or files read at run time travel as node_modules.
  external: ["@duckdb/*", "parquet-wasm", "esbuild", "ssh2", "cpu-features"],
  // The device bench never runs Polars (its binding is 115 MB): an empty stand-in.
  alias: { "nodejs-polars": "./scripts/polars_absent.mjs" },
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
};
await build({ ...common, entryPoints: ["test/gpu/device_run.ts"], outfile: join(dir, "engine/run.js") });
await build({ ...common, entryPoints: ["engine/workers/worker.ts"], outfile: join(dir, "workers/worker.js") });
await build({
  ...common,
  entryPoints: ["engine/workers/worker_process.ts"],
  outfile: join(dir, "workers/worker_process.js"),
});

cpSync("native/build/Release/basin.node", join(dir, "basin.node"));
const nm = join(dir, "node_modules");
for (const p of ["@duckdb/node-api", "@duckdb/node-bindings"])
  cpSync(join("node_modules", p), join(nm, p), { recursive: true });
const bindings = join(nm, "@duckdb/node-bindings-linux-x64");
mkdirSync(bindings, { recursive: true });
for (const f of ["package.json", "duckdb.node"])
  cpSync(join("node_modules/@duckdb/node-bindings-linux-x64", f), join(bindings, f));
mkdirSync(join(nm, "parquet-wasm"), { recursive: true });
for (const f of ["package.json", "node"])
  cpSync(join("node_modules/parquet-wasm", f), join(nm, "parquet-wasm", f), { recursive: true });

// Big binaries go compressed (xz -9 takes a minute; cached beside the bundle).
const cache = ".gpu-bundle-cache";
mkdirSync(cache, { recursive: true });
const xz = (src, name) => {
  const dst = join(cache, `${name}.xz`);
  if (!existsSync(dst) || statSync(dst).mtimeMs < statSync(src).mtimeMs)
    writeFileSync(dst, execFileSync("xz", ["-9", "-T2", "-c", src], { maxBuffer: 1 << 30 }));
  cpSync(dst, join(dir, `${name}.xz`));
};
xz(process.execPath, "node");
xz("node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so", "libduckdb.so");

writeFileSync(
  join(dir, "run.sh"),
  `set -e
cd "$(dirname "$0")"
[ -x node ] || xz -dc node.xz > node && chmod +x node
b=node_modules/@duckdb/node-bindings-linux-x64
[ -f $b/libduckdb.so ] || xz -dc libduckdb.so.xz > $b/libduckdb.so
export BASIN_ADDON="$PWD/basin.node" OUT="\${OUT:-$PWD/out}"
exec ./node --expose-gc --max-old-space-size=16384 engine/run.js
`,
);
const size = execFileSync("du", ["-sb", dir]).toString().split("\t")[0];
console.log(`${dir}: ${(Number(size) / 2 ** 20).toFixed(1)} MiB`);

// Transpiles engine/ (and electron/) TypeScript to dist/, file by file, keeping the
// module graph as it is so that the CLI, the worker threads and user pipelines
// share one instance of every module. Then bundles the browser workbench
// (renderer/) into dist/renderer/.
import { build } from "esbuild";
import { globSync } from "tinyglobby";
import { buildRenderer } from "./build_renderer.mjs";

const entryPoints = globSync(["engine/**/*.ts", "electron/**/*.ts", "bench/**/*.ts"], {
  ignore: ["**/*.d.ts", "electron/preload.ts"],
});
await build({
  entryPoints,
  outdir: "dist",
  outbase: ".",
  bundle: false,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
});
// Electron loads a sandboxed preload script as one CommonJS file.
await build({
  entryPoints: ["electron/preload.ts"],
  outfile: "dist/electron/preload.cjs",
  bundle: true,
  external: ["electron"],
  platform: "node",
  format: "cjs",
  target: "node20",
  logLevel: "warning",
});
await buildRenderer();

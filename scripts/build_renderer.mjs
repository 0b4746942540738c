// Bundles the browser workbench into dist/renderer/: index.html, app.js + app.css
// (React, Monaco, TanStack, uPlot; fonts inlined by loaders), Monaco's editor and
// TypeScript workers as their own bundles, and basin-types.json: the REAL
// declarations of the `basin` module (tsc --emitDeclarationOnly over
// engine/api/index.ts) that the editor adds to Monaco for completion and checks.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { build } from "esbuild";
import { globSync } from "tinyglobby";

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "dist/renderer");

/** engine/api's declarations, keyed by their path under the engine folder ("api/index.d.ts"). */
function basinDeclarations() {
  const tmp = mkdtempSync(join(tmpdir(), "basin-dts-"));
  try {
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    execFileSync(
      process.execPath,
      [
        tsc,
        join(ROOT, "engine/api/index.ts"),
        "--ignoreConfig",
        "--declaration",
        "--emitDeclarationOnly",
        "--outDir",
        tmp,
        "--rootDir",
        join(ROOT, "engine"),
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--target",
        "es2022",
        "--skipLibCheck",
        "--types",
        "node",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    const files = {};
    for (const f of globSync("**/*.d.ts", { cwd: tmp })) files[f] = readFileSync(join(tmp, f), "utf8");
    if (!files["api/index.d.ts"]) throw new Error("tsc emitted no api/index.d.ts");
    return files;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function buildRenderer() {
  mkdirSync(OUT, { recursive: true });
  const common = {
    bundle: true,
    format: "esm",
    target: "es2022",
    platform: "browser",
    logLevel: "warning",
    sourcemap: "linked",
    legalComments: "none",
  };
  await Promise.all([
    build({
      ...common,
      entryPoints: { app: join(ROOT, "renderer/src/main.tsx") },
      outdir: OUT,
      jsx: "automatic",
      loader: { ".ttf": "dataurl", ".woff": "dataurl", ".woff2": "dataurl", ".svg": "dataurl" },
      define: { "process.env.NODE_ENV": '"production"' },
    }),
    build({
      ...common,
      entryPoints: {
        "editor.worker": join(ROOT, "node_modules/monaco-editor/esm/vs/editor/editor.worker.js"),
        "ts.worker": join(ROOT, "node_modules/monaco-editor/esm/vs/language/typescript/ts.worker.js"),
      },
      outdir: OUT,
      sourcemap: false,
    }),
  ]);
  copyFileSync(join(ROOT, "renderer/src/index.html"), join(OUT, "index.html"));
  writeFileSync(join(OUT, "basin-types.json"), JSON.stringify(basinDeclarations()));
  return relative(ROOT, OUT);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await buildRenderer();

// `npm start`: opens the workbench in Electron (after `npm run build`), or says
// how to get the same app in a browser when no Electron binary is installed.
//
//   node scripts/start_electron.mjs [workspace-folder]
// BASIN_ELECTRON names an Electron binary to use instead of the `electron` package's.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const MAIN = join(ROOT, "dist/electron/main.js");

/** The Electron binary, or why there is none. */
export function findElectron(env = process.env) {
  if (env.BASIN_ELECTRON)
    return existsSync(env.BASIN_ELECTRON)
      ? { binary: env.BASIN_ELECTRON }
      : { missing: `BASIN_ELECTRON=${env.BASIN_ELECTRON} does not exist` };
  let binary;
  const require = createRequire(join(ROOT, "package.json"));
  try {
    // The `electron` npm package exports the path of the binary it downloaded.
    binary = require("electron");
  } catch {
    // It is an optional dependency: `npm install` goes on without it when its binary
    // cannot be downloaded (no access to GitHub) or ELECTRON_SKIP_BINARY_DOWNLOAD is set.
    let installed = false;
    try {
      installed = !!require.resolve("electron/package.json");
    } catch {
      installed = false;
    }
    return {
      missing: installed
        ? "the `electron` package is installed but its binary was not downloaded"
        : "the `electron` package is not installed",
    };
  }
  if (typeof binary !== "string" || !existsSync(binary))
    return { missing: "the `electron` package is installed but its binary was not downloaded" };
  return { binary };
}

export function missingMessage(why) {
  return [
    `Basin desktop cannot start: ${why}.`,
    "Use the same workbench in a browser instead:",
    "  npx basin serve [folder]",
    "To get the desktop app, fetch Electron's binary (it is an optional dependency; its",
    "install downloads it from github.com, or from ELECTRON_MIRROR when that is set):",
    "  npm install electron        (unset ELECTRON_SKIP_BINARY_DOWNLOAD first)",
    "or point BASIN_ELECTRON at an Electron binary you have: BASIN_ELECTRON=/path/to/electron npm start",
    "Packages: npx electron-builder --linux AppImage deb (after npm run build).",
  ].join("\n");
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const found = findElectron();
  if (!found.binary) {
    console.error(missingMessage(found.missing));
    process.exit(1);
  }
  if (!existsSync(MAIN)) {
    console.error("Basin desktop: dist/electron/main.js is not built; run `npm run build` first");
    process.exit(1);
  }
  const child = spawn(found.binary, [MAIN, ...process.argv.slice(2)], { stdio: "inherit" });
  child.on("exit", (code, signal) => process.exit(signal ? 1 : (code ?? 0)));
}

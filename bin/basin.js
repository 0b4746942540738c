#!/usr/bin/env node
// The `basin` command: runs the compiled CLI (built by `npm install`).
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const cli = fileURLToPath(new URL("../dist/engine/cli/main.js", import.meta.url));
if (!existsSync(cli)) {
  console.error("basin: the engine is not built yet; run `npm install` (or `npm run build`) in the Basin folder");
  process.exit(1);
}
const { mainChecked } = await import(cli);
process.exitCode = await mainChecked(process.argv.slice(2));

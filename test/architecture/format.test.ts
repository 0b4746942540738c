// One formatter: every file prettier formats (.prettierrc.json, .prettierignore) is
// formatted, so style never needs review. `npm run format` fixes what this finds.
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const PRETTIER = resolve(ROOT, "node_modules/prettier/bin/prettier.cjs");

describe("format", () => {
  it("has every source file formatted by prettier (run npm run format)", () => {
    const r = spawnSync(process.execPath, [PRETTIER, "--list-different", "."], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.stdout.split("\n").filter(Boolean)).toEqual([]);
  });

  it("notices a file that is not formatted", () => {
    const r = spawnSync(process.execPath, [PRETTIER, "--check", "--stdin-filepath", "engine/x.ts"], {
      cwd: ROOT,
      encoding: "utf8",
      input: "const  x = {a:1}\n",
    });
    expect(r.status).not.toBe(0);
  });
});

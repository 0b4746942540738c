// DESIGN.md's layering, checked on every file's imports so a wrong import fails CI.
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function importsOf(file: string): string[] {
  const src = readFileSync(resolve(ROOT, file), "utf8");
  const specs: string[] = [];
  for (const m of src.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)) specs.push(m[1] ?? m[2]);
  return specs;
}

/** The repo-relative path an import points to, or the bare package name. */
function target(file: string, spec: string): string {
  if (!spec.startsWith(".")) return spec;
  return relative(ROOT, resolve(ROOT, dirname(file), spec));
}

const NODE_BUILTIN = /^node:|^(fs|path|os|url|worker_threads|child_process|module|util|events|stream|crypto)$/;

function violations(glob: string, forbidden: (t: string) => string | undefined): string[] {
  const out: string[] = [];
  for (const file of globSync(glob, { cwd: ROOT }))
    for (const spec of importsOf(file)) {
      const why = forbidden(target(file, spec));
      if (why) out.push(`${file} imports ${spec}: ${why}`);
    }
  return out;
}

describe("layering", () => {
  it("finds imports in the engine (the checker itself works)", () => {
    expect(importsOf("engine/cli/main.ts")).toContain("../api/dataframe.js");
  });

  it("keeps engine/ free of React, the DOM, the renderer and Electron", () => {
    expect(violations("engine/**/*.ts", (t) => (/^(react|react-dom|electron|monaco-editor)/.test(t) || t.startsWith("renderer/") ? "engine code runs in Node, without UI" : undefined))).toEqual([]);
  });

  it("keeps the common parts pure: no Node, no DOM, nothing outside common/", () => {
    const rule = (t: string) =>
      NODE_BUILTIN.test(t) ? "common code must run in the renderer too" : !t.startsWith(".") && (t.startsWith("engine/") || t.startsWith("renderer/")) && !/^(engine|renderer)\/common\//.test(t) ? "common may only import common" : undefined;
    expect([...violations("engine/common/**/*.ts", rule), ...violations("renderer/common/**/*.ts", rule)]).toEqual([]);
  });

  it("keeps renderer/ away from Node and from the engine's internals", () => {
    const rule = (t: string) => (NODE_BUILTIN.test(t) ? "the renderer never imports Node" : t.startsWith("engine/") && !t.startsWith("engine/common/") ? "the renderer talks to the engine only through engine/common" : undefined);
    expect(violations("renderer/**/*.{ts,tsx}", rule)).toEqual([]);
  });
});

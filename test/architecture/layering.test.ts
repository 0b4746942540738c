// DESIGN.md's layering and engine/README.md's folder diagram, checked on every
// file's imports so that a wrong import fails CI instead of waiting for review.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { globSync } from "tinyglobby";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

interface Import {
  spec: string;
  /** `import type` / `export type`: erased by the build, so it never runs or orders module loading. */
  typeOnly: boolean;
}

interface Source {
  /** Repo-relative path. */
  file: string;
  text: string;
}

function importsOf(text: string): Import[] {
  const out: Import[] = [];
  for (const m of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s(type\s)?[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g,
  ))
    out.push({ spec: m[2] ?? m[3], typeOnly: m[1] !== undefined });
  return out;
}

/** The repo-relative path an import points to (".js" read as ".ts"), or the bare package name. */
function target(file: string, spec: string): string {
  if (!spec.startsWith(".")) return spec;
  return relative(ROOT, resolve(ROOT, dirname(file), spec)).replace(/\.js$/, ".ts");
}

function read(glob: string | string[]): Source[] {
  return globSync(glob, { cwd: ROOT, ignore: ["**/*.d.ts"] }).map((file) => ({
    file,
    text: readFileSync(resolve(ROOT, file), "utf8"),
  }));
}

type Rule = (from: string, to: string) => string | undefined;

const NODE_BUILTIN = /^node:|^(fs|path|os|url|worker_threads|child_process|module|util|events|stream|crypto)$/;
const under = (t: string, ...dirs: string[]) => dirs.some((d) => t === d || t.startsWith(`${d}/`));

/** Every rule, by the files it applies to. */
const RULES: { files: RegExp; rule: Rule }[] = [
  {
    files: /^engine\//,
    rule: (_, t) =>
      /^(react|react-dom|electron|monaco-editor)(\/|$)/.test(t) || under(t, "renderer")
        ? "engine code runs in Node, without UI"
        : undefined,
  },
  {
    files: /^(engine|renderer)\/common\//,
    rule: (_, t) =>
      NODE_BUILTIN.test(t)
        ? "common code must run in the renderer too"
        : under(t, "engine", "renderer") && !/^(engine|renderer)\/common\//.test(t)
          ? "common may only import common"
          : undefined,
  },
  {
    files: /^renderer\//,
    rule: (_, t) =>
      NODE_BUILTIN.test(t)
        ? "the renderer never imports Node"
        : under(t, "engine") && !under(t, "engine/common")
          ? "the renderer talks to the engine only through engine/common"
          : undefined,
  },
  // Collections only build plans: running, lowering and scheduling them is engine/run's.
  {
    files: /^engine\/api\//,
    rule: (_, t) =>
      under(t, "engine/lower", "engine/workers", "engine/scheduler")
        ? "api builds plans; it runs them through engine/run, never lower/workers/scheduler directly"
        : undefined,
  },
  {
    files: /^engine\/cluster\//,
    rule: (_, t) =>
      under(t, "engine/api", "engine/run", "engine/session", "engine/server", "engine/cli")
        ? "a cluster runs plans and graphs; it never reaches up to the layers that use it"
        : undefined,
  },
  // The addon's typings sit below lowering: task and step types come from engine/graph.
  {
    files: /^engine\/native\//,
    rule: (_, t) =>
      under(t, "engine/lower", "engine/plan", "engine/scheduler", "engine/workers", "engine/api", "engine/run")
        ? "the native typings import only common/ and graph/"
        : undefined,
  },
  {
    files: /^engine\/graph\//,
    rule: (_, t) =>
      under(t, "engine") && !under(t, "engine/common", "engine/graph")
        ? "graph/ holds plain types every layer below the planner shares; it imports only common/"
        : undefined,
  },
  {
    files: /^electron\//,
    rule: (_, t) =>
      under(t, "renderer") && !under(t, "renderer/common")
        ? "electron glues: the renderer's React code is bundled, never imported"
        : under(t, "engine") &&
            !under(t, "engine/common") &&
            t !== "engine/server/assets.ts" &&
            t !== "engine/server/csp.ts"
          ? "electron glues: the engine runs in its own process (only engine/common and the server's asset helpers are shared)"
          : undefined,
  },
];

/** Every import that breaks a rule, as "file imports spec: why". */
function violations(sources: Source[]): string[] {
  const out: string[] = [];
  for (const { file, text } of sources)
    for (const { spec } of importsOf(text)) {
      const to = target(file, spec);
      for (const { files, rule } of RULES) {
        if (!files.test(file)) continue;
        const why = rule(file, to);
        if (why) out.push(`${file} imports ${spec}: ${why}`);
      }
    }
  return out;
}

/** Value imports between the given files (type-only imports are erased, so they cannot order module loading). */
function fileEdges(sources: Source[]): Map<string, string[]> {
  const files = new Set(sources.map((s) => s.file));
  return new Map(
    sources.map(({ file, text }) => [
      file,
      importsOf(text)
        .filter((i) => !i.typeOnly)
        .map((i) => target(file, i.spec))
        .filter((t) => files.has(t)),
    ]),
  );
}

/** The same, between engine's top-level folders ("engine/run" → "engine/cluster"). */
function folderEdges(sources: Source[]): Map<string, string[]> {
  const folderOf = (f: string) => f.split("/").slice(0, 2).join("/");
  const out = new Map<string, string[]>();
  for (const [file, tos] of fileEdges(sources)) {
    if (file.split("/").length < 3) continue;
    const from = folderOf(file);
    out.set(from, [...new Set([...(out.get(from) ?? []), ...tos.map(folderOf).filter((t) => t !== from)])]);
  }
  for (const tos of [...out.values()]) for (const t of tos) if (!out.has(t)) out.set(t, []);
  return out;
}

/** The strongly connected groups of more than one node (Tarjan): each is an import cycle. */
function cycles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(scc.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("layering", () => {
  const tree = read(["engine/**/*.ts", "renderer/**/*.{ts,tsx}", "electron/**/*.ts"]);

  it("finds imports, type-only ones marked (the checker itself works)", () => {
    const main = tree.find((s) => s.file === "engine/cli/main.ts")!;
    expect(importsOf(main.text)).toContainEqual({ spec: "./run_file.js", typeOnly: false });
    expect(importsOf(main.text)).toContainEqual({ spec: "../cluster/cluster.js", typeOnly: true });
  });

  it("fails on a deliberately wrong import of each kind", () => {
    const wrong: Source[] = [
      { file: "engine/api/bad.ts", text: `import { lowerPlan } from "../lower/lower.js";` },
      { file: "engine/cluster/bad.ts", text: `import { DataFrame } from "../api/dataframe.js";` },
      { file: "engine/native/bad.ts", text: `import type { Chain } from "../lower/chain.js";` },
      { file: "engine/common/bad.ts", text: `import { readFileSync } from "node:fs";` },
      { file: "renderer/src/bad.ts", text: `import { native } from "../../engine/native/addon.js";` },
      { file: "electron/bad.ts", text: `import { runPlan } from "../engine/run/run_plan.js";` },
      { file: "engine/server/bad.ts", text: `import React from "react";` },
    ];
    const found = violations(wrong);
    for (const w of wrong)
      expect(
        found.some((v) => v.startsWith(`${w.file} imports`)),
        w.file,
      ).toBe(true);
    expect(
      violations([{ file: "engine/run/fine.ts", text: `import { lowerPlan } from "../lower/lower.js";` }]),
    ).toEqual([]);
  });

  it("keeps every file of engine/, renderer/ and electron/ to the rules", () => {
    expect(violations(tree)).toEqual([]);
  });

  it("finds an import cycle between files or folders when there is one, and engine/ has none", () => {
    const loop: Source[] = [
      { file: "engine/x/a.ts", text: `import { b } from "./b.js";` },
      { file: "engine/x/b.ts", text: `import { a } from "./a.js";` },
      { file: "engine/x/c.ts", text: `import type { a } from "./a.js";\nimport { d } from "../y/d.js";` },
      { file: "engine/y/d.ts", text: `import { b } from "../x/b.js";` },
    ];
    expect(cycles(fileEdges(loop))).toEqual([["engine/x/a.ts", "engine/x/b.ts"]]);
    expect(cycles(folderEdges(loop))).toEqual([["engine/x", "engine/y"]]);
    const engine = tree.filter((s) => s.file.startsWith("engine/"));
    expect(cycles(fileEdges(engine))).toEqual([]);
    expect(cycles(folderEdges(engine))).toEqual([]);
    expect(folderEdges(engine).get("engine/run")).toContain("engine/cluster"); // the folder graph is really built
  });

  it("names every engine folder in engine/README.md's map", () => {
    const map = readFileSync(resolve(ROOT, "engine/README.md"), "utf8");
    const folders = (dir: string): string[] =>
      readdirSync(resolve(ROOT, dir), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .flatMap((d) => [`${dir}/${d.name}`, ...folders(`${dir}/${d.name}`)]);
    const missing = folders("engine")
      .map((f) => f.slice("engine/".length))
      .filter((f) => !map.includes(`${f}/`));
    expect(missing).toEqual([]);
  });
});

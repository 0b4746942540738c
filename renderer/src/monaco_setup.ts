// Monaco for pipeline files: its workers (built as their own bundles), the
// workbench themes, and TypeScript intelligence for the `basin` module from the
// engine's real declarations (dist/renderer/basin-types.json, emitted by tsc at build).
import * as monaco from "monaco-editor";

declare global {
  interface Window {
    MonacoEnvironment?: monaco.Environment;
  }
}

window.MonacoEnvironment = {
  getWorker(_id: string, label: string) {
    const file = label === "typescript" || label === "javascript" ? "ts.worker.js" : "editor.worker.js";
    return new Worker(new URL(file, document.baseURI), { type: "module", name: label });
  },
};

/**
 * What pipelines see of Node without @types/node (they run in Node): settings from the
 * environment, process.exit, console and the timers.
 */
const PIPELINE_GLOBALS = `
declare var process: {
  env: Record<string, string | undefined>;
  argv: string[];
  platform: string;
  cwd(): string;
  exit(code?: number): never;
};
interface Console {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
  table(data: unknown, columns?: string[]): void;
  time(label?: string): void;
  timeEnd(label?: string): void;
}
declare var console: Console;
interface Timeout { ref(): this; unref(): this; hasRef(): boolean; }
declare function setTimeout<A extends unknown[]>(callback: (...args: A) => void, ms?: number, ...args: A): Timeout;
declare function clearTimeout(timeout: Timeout | undefined): void;
declare function setInterval<A extends unknown[]>(callback: (...args: A) => void, ms?: number, ...args: A): Timeout;
declare function clearInterval(timeout: Timeout | undefined): void;
declare function setImmediate<A extends unknown[]>(callback: (...args: A) => void, ...args: A): unknown;
declare function queueMicrotask(callback: () => void): void;
declare function structuredClone<T>(value: T): T;
declare var performance: { now(): number };
`;

let typings: Promise<void> | undefined;

/** Registers the `basin` declarations once; resolves when they are in place. */
export function loadBasinTypings(): Promise<void> {
  typings ??= (async () => {
    const ts = monaco.typescript;
    ts.typescriptDefaults.setCompilerOptions({
      target: ts.ScriptTarget.ES2020,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.NodeJs,
      strict: true,
      noEmit: true,
      esModuleInterop: true,
      allowNonTsExtensions: true,
      lib: ["es2022"],
    });
    ts.typescriptDefaults.setEagerModelSync(true);
    const res = await fetch("basin-types.json");
    if (!res.ok) throw new Error(`basin-types.json: HTTP ${res.status}; rebuild the workbench with \`npm run build\``);
    const files = (await res.json()) as Record<string, string>;
    const libs = Object.entries(files).map(([path, content]) => ({
      filePath: `file:///node_modules/basin/${path}`,
      content,
    }));
    libs.push({
      filePath: "file:///node_modules/basin/package.json",
      content: JSON.stringify({ name: "basin", types: "./api/index.d.ts" }),
    });
    libs.push({ filePath: "file:///node_modules/basin/index.d.ts", content: `export * from "./api/index.js";\n` });
    libs.push({ filePath: "file:///node_modules/@types/basin-pipeline-globals/index.d.ts", content: PIPELINE_GLOBALS });
    ts.typescriptDefaults.setExtraLibs(libs);
  })();
  return typings;
}

monaco.editor.defineTheme("basin-dark", {
  base: "vs-dark",
  inherit: true,
  rules: [],
  colors: { "editor.background": "#1b1d23" },
});
monaco.editor.defineTheme("basin-light", {
  base: "vs",
  inherit: true,
  rules: [],
  colors: { "editor.background": "#ffffff" },
});

/** The model URI of a workspace file: under file:/// so `basin` resolves from /node_modules. */
export function modelUri(path: string): monaco.Uri {
  return monaco.Uri.parse(`file:///${path}`);
}

export { monaco };

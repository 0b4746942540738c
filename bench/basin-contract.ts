/**
 * The slice of Basin's pipeline API the benchmark uses, typed structurally so the
 * harness compiles and runs (DuckDB and Polars columns) even while the engine is
 * absent. The real module is loaded at run time by {@link loadBasin}.
 */

/** A cell value as Basin's `toRows()` returns it. */
export type BasinCell = number | string | null | bigint | boolean | Date;

/** A Basin expression (the methods the groupby questions use). */
export interface BasinExpr {
  sum(): BasinExpr;
  mean(): BasinExpr;
  min(): BasinExpr;
  max(): BasinExpr;
  count(): BasinExpr;
  std(): BasinExpr;
  var(): BasinExpr;
  median(): BasinExpr;
  nUnique(): BasinExpr;
  first(): BasinExpr;
  last(): BasinExpr;
  alias(name: string): BasinExpr;
  add(other: BasinExpr | number): BasinExpr;
  sub(other: BasinExpr | number): BasinExpr;
  mul(other: BasinExpr | number): BasinExpr;
  div(other: BasinExpr | number): BasinExpr;
}

/** A computed Basin table. */
export interface BasinTable {
  readonly numRows: number;
  readonly columnNames: readonly string[];
  toRows(): Record<string, BasinCell>[];
}

/** A grouped Basin frame. */
export interface BasinGroupBy {
  agg(...exprs: BasinExpr[]): BasinFrame;
}

/** A lazy Basin DataFrame. */
export interface BasinFrame {
  groupBy(...keys: (string | BasinExpr)[]): BasinGroupBy;
  withColumns(cols: Record<string, BasinExpr>): BasinFrame;
  select(...cols: (string | BasinExpr)[]): BasinFrame;
  compute(): Promise<BasinTable>;
}

/** Options accepted by Basin's `readCsv` that the benchmark passes. */
export interface BasinReadCsvOptions {
  dtypes?: Record<string, string>;
}

/** The Basin API module (`engine/api/index.ts`). */
export interface BasinApi {
  readCsv(path: string, options?: BasinReadCsvOptions): BasinFrame;
  col(name: string): BasinExpr;
}

/**
 * Loads Basin's API module. Returns the module, or an Error saying why it is not
 * available (missing file, failed import, missing exports).
 */
export async function loadBasin(): Promise<BasinApi | Error> {
  try {
    // A literal specifier: esbuild bundles the engine when it exists and leaves the
    // import alone (failing at run time, caught here) when it does not.
    // @ts-ignore -- engine/api may not exist yet while it is being written.
    const mod = (await import("../engine/api/index.js")) as unknown as Partial<BasinApi>;
    if (typeof mod.readCsv !== "function" || typeof mod.col !== "function") {
      return new Error("engine not available: engine/api/index lacks readCsv/col");
    }
    return mod as BasinApi;
  } catch (e) {
    const msg = e instanceof Error ? e.message.split("\n")[0] : String(e);
    process.stderr.write(`[bench] basin: engine not available: ${msg}\n`);
    return new Error("engine not available");
  }
}

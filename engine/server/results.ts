// Results the workbench is looking at, kept in the native store by id: paged by
// viewport, sorted and filtered into new results, profiled per column. Views and
// profiles are ordinary plans over the stored table, so they run on the cluster's
// workers and never block the server.
import { engineLower } from "../common/case_map.js";
import { col, Expr, type ExprLike } from "../api/expr.js";
import { DataFrame } from "../api/dataframe.js";
import { computeParts, computeStored, type ComputeOptions } from "../run/stored.js";
import { withResident } from "../memory/resident.js";
import { BasinError } from "../common/errors.js";
import type {
  Bins2d,
  Bins2dView,
  ColumnProfile,
  CompareOp,
  ExportFormat,
  Page,
  ResultFilter,
  ResultInfo,
  ResultSample,
  ResultSort,
  WireValue,
} from "../common/rpc.js";
import { checkWritable, type WriteSummary } from "../io/write.js";
import { writeStored } from "../run/write_frame.js";
import type { ProgressEvent } from "../scheduler/shell.js";
import type { Field } from "../common/types.js";
import { native, type Handle } from "../native/addon.js";
import { toWire } from "./wire.js";
import { bins2d, countDistinct, profileBasics, profileColumn, type ColumnBasics } from "./profile.js";

/** Most rows one page request may ask for. */
export const MAX_PAGE_ROWS = 10_000;
/** Most rows one sample request may ask for. */
export const MAX_SAMPLE_ROWS = 100_000;

interface Kept {
  info: ResultInfo;
  /** The result's partitions, in order (never concatenated: a result larger than the memory limit stays spillable). */
  refs: Handle[];
  /** Rows of each part. */
  rows: number[];
}

function fail(message: string): never {
  throw new BasinError("BASIN_PLAN", message);
}

/**
 * @example
 * const results = new ResultStore({});
 * const info = results.keep(ref, "run-1");
 * const page = results.page(info.id, 0, 100);
 */
export class ResultStore {
  private readonly kept = new Map<string, Kept>();
  /** Each profiled result's one aggregate over all its columns. */
  private readonly basics = new Map<string, Promise<Map<string, ColumnBasics>>>();
  private counter = 0;

  constructor(private readonly compute: Pick<ComputeOptions, "cluster">) {}

  /**
   * Takes ownership of `ref` (a table in the store), or of a result's parts in order,
   * and gives it an id (and the name `show()` gave it).
   */
  keep(
    ref: Handle | Handle[],
    source: string,
    what: { name?: string; kind?: ResultInfo["kind"]; array?: ResultInfo["array"] } = {},
  ): ResultInfo {
    const refs = Array.isArray(ref) ? ref : [ref];
    const t = native().tableInfo(refs[0]);
    const rows = refs.map((h) => native().tableRows(h));
    const info: ResultInfo = {
      id: `result-${++this.counter}`,
      schema: t.names.map((name, i): Field => ({ name, type: t.types[i] })),
      rows: rows.reduce((a, b) => a + b, 0),
      source,
    };
    if (what.name !== undefined) info.name = what.name;
    if (what.kind) info.kind = what.kind;
    if (what.array) info.array = what.array;
    this.kept.set(info.id, { info, refs, rows });
    return info;
  }

  /** Rows [offset, offset + limit) across the result's parts; a spilled part is read back off the JS thread. */
  async page(id: string, offset: number, limit: number, columns?: string[]): Promise<Page> {
    const { info, refs, rows } = this.get(id);
    if (!Number.isInteger(offset) || offset < 0) fail(`page offset must be a non-negative integer, got ${offset}`);
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_PAGE_ROWS)
      fail(`page limit must be an integer in 0..${MAX_PAGE_ROWS}, got ${limit}`);
    const names = columns ?? info.schema.map((f) => f.name);
    for (const n of names) if (!info.schema.some((f) => f.name === n)) fail(`result ${id} has no column "${n}"`);
    const start = Math.min(offset, info.rows);
    const end = Math.min(info.rows, start + limit);
    // The parts the page overlaps (the first one for an empty page, for the schema), retained
    // so that releasing the result meanwhile is safe.
    const touched: { h: Handle; from: number; n: number }[] = [];
    for (let i = 0, at = 0; i < refs.length; at += rows[i++]) {
      const from = Math.max(start, at),
        to = Math.min(end, at + rows[i]);
      if (to > from) touched.push({ h: refs[i], from: from - at, n: to - from });
    }
    if (touched.length === 0) touched.push({ h: refs[0], from: 0, n: 0 });
    for (const t of touched) native().retain(t.h);
    const slices: Handle[] = [];
    try {
      for (const t of touched) slices.push(await withResident(t.h, (h) => native().slice(h, t.from, t.n)));
      const rowsOfPage = slices.length === 1 ? slices[0] : native().concat(slices);
      if (rowsOfPage !== slices[0]) slices.push(rowsOfPage);
      const js = native().tableToJs(rowsOfPage);
      const all = toWire(js);
      return { resultId: id, offset: start, columns: names, values: names.map((n) => all[js.names.indexOf(n)]) };
    } finally {
      for (const h of slices) native().release(h);
      for (const t of touched) native().release(t.h);
    }
  }

  /** A new result: the rows of `id` that pass every filter, stably sorted. */
  async view(id: string, sort: ResultSort[], filters: ResultFilter[]): Promise<ResultInfo> {
    return this.using(id, (frame, info) => {
      let df = frame;
      for (const f of filters) df = df.filter(filterExpr(df, f));
      if (sort.length > 0)
        df = df.sort(
          sort.map((s) => s.column),
          { descending: sort.map((s) => s.descending) },
        );
      return this.keepFrame(df, id, { kind: info.kind });
    });
  }

  /** Computes a frame and keeps its parts as a result. */
  async keepFrame(
    df: DataFrame,
    source: string,
    what: { name?: string; kind?: ResultInfo["kind"] } = {},
  ): Promise<ResultInfo> {
    const { refs } = await computeParts(df.toPlan(), this.compute);
    return this.keep(refs, source, what);
  }

  /**
   * Up to `n` rows of `columns`, drawn uniformly at random without replacement (all rows
   * when the result has no more), in the result's order: what a plot of a large result draws.
   */
  async sample(id: string, n: number, columns: string[]): Promise<ResultSample> {
    return this.using(id, (frame, info) => this.sampleOf(id, frame, info, n, columns));
  }

  private async sampleOf(
    id: string,
    frame: DataFrame,
    info: ResultInfo,
    n: number,
    columns: string[],
  ): Promise<ResultSample> {
    if (!Number.isInteger(n) || n < 1 || n > MAX_SAMPLE_ROWS)
      fail(`sample size must be an integer in 1..${MAX_SAMPLE_ROWS}, got ${n}`);
    if (!Array.isArray(columns) || columns.length === 0) fail("sample needs at least one column");
    for (const c of columns) if (!info.schema.some((f) => f.name === c)) fail(`result ${id} has no column "${c}"`);
    const distinct = [...new Set(columns)];
    let df = frame.select(...distinct);
    if (info.rows > n) df = df.sample({ n }, { seed: 1 });
    const { ref } = await computeStored(df.toPlan(), this.compute);
    try {
      const js = native().tableToJs(ref);
      const all = toWire(js);
      return {
        resultId: id,
        columns,
        values: columns.map((c) => all[js.names.indexOf(c)]),
        total: info.rows,
      };
    } finally {
      native().release(ref);
    }
  }

  /**
   * A column's profile (engine/server/profile.ts): the aggregate over all columns is
   * made once per result and shared, so profiling each column in turn costs one
   * pass for them all plus each column's own plans.
   */
  async profile(id: string, column: string): Promise<ColumnProfile> {
    return this.using(id, async (df) => {
      const field = df.schema.find((f) => f.name === column) ?? fail(`result ${id} has no column "${column}"`);
      return profileColumn(df, field, (await this.basicsOf(id, df)).get(column)!, this.compute);
    });
  }

  /** Distinct non-null values of a column (exact). */
  async countDistinct(id: string, column: string): Promise<number> {
    return this.using(id, (df) => {
      if (!df.schema.some((f) => f.name === column)) fail(`result ${id} has no column "${column}"`);
      return countDistinct(df, column, this.compute);
    });
  }

  /** A 2-D histogram of two columns over every row, made on the workers. */
  async bins2d(id: string, x: string, y: string, xBins: number, yBins: number, view?: Bins2dView): Promise<Bins2d> {
    return this.using(id, async (df) => {
      const b = await bins2d(df, { x, y, xBins, yBins, view }, await this.basicsOf(id, df), this.compute);
      return { resultId: id, ...b };
    });
  }

  /** The one aggregate over all of a result's columns, made once and shared by its profiles. */
  private basicsOf(id: string, df: DataFrame): Promise<Map<string, ColumnBasics>> {
    let basics = this.basics.get(id);
    if (!basics) {
      const made = profileBasics(df, this.compute);
      this.basics.set(id, made);
      made.catch(() => this.basics.get(id) === made && this.basics.delete(id));
      basics = made;
    }
    return basics;
  }

  /**
   * Writes result `id` to `file` (an absolute path) through engine/run's atomic
   * writers (CSV formatted by the local workers, a part each). The parts are retained
   * meanwhile, so releasing the result mid-write is safe; `onProgress` hears parts written.
   */
  async export(
    id: string,
    file: string,
    format: ExportFormat,
    onProgress?: (e: ProgressEvent) => void,
  ): Promise<WriteSummary> {
    if (format !== "csv" && format !== "parquet")
      fail(`export format must be "csv" or "parquet", got ${JSON.stringify(format)}`);
    // An export names a file: a folder there is an error, not a folder output.
    checkWritable(file);
    const { refs } = this.get(id);
    for (const h of refs) native().retain(h);
    // writeStored releases the retained parts.
    return writeStored([...refs], file, format, {}, undefined, undefined, this.compute.cluster, onProgress);
  }

  release(id: string): void {
    const k = this.get(id);
    this.kept.delete(id);
    this.basics.delete(id);
    for (const h of k.refs) native().release(h);
  }

  /** Frees every kept result (the server is closing). */
  clear(): void {
    for (const id of [...this.kept.keys()]) this.release(id);
  }

  get size(): number {
    return this.kept.size;
  }

  private get(id: string): Kept {
    return (
      this.kept.get(id) ?? fail(`no result "${id}": it was released or the engine restarted; run the pipeline again`)
    );
  }

  /**
   * Runs `use` over result `id` as a frame, its parts retained meanwhile: a release
   * (a new run replacing the result) while a view, profile or plot computes over it
   * failed that with "retain of unknown handle".
   */
  private async using<T>(id: string, use: (df: DataFrame, info: ResultInfo) => Promise<T>): Promise<T> {
    const { info, refs } = this.get(id);
    for (const h of refs) native().retain(h);
    try {
      const df = new DataFrame({
        kind: "stored",
        handles: refs,
        bytes: info.rows * info.schema.length * 8,
        schema: info.schema,
      });
      return await use(df, info);
    } finally {
      for (const h of refs) native().release(h);
    }
  }
}

/**
 * A filter's value as the column compares with it: an int64 past 2^53 comes as its
 * digits (a BigInt here, exact), NaN and ±Infinity of a float64 as their names.
 */
function filterValue(field: Field, v: WireValue): ExprLike {
  if (typeof v !== "string") return v;
  if (field.type === "int64") {
    if (!/^-?\d+$/.test(v)) fail(`"${v}" is not an integer for the int64 column "${field.name}"`);
    const n = BigInt(v);
    if (n < -(2n ** 63n) || n >= 2n ** 63n)
      fail(`${v} is outside what the int64 column "${field.name}" can hold (−2^63 … 2^63 − 1)`);
    return n;
  }
  if (field.type === "float64") {
    const special = SPECIAL_FLOATS.get(v);
    if (special === undefined) fail(`"${v}" is not a number for the float64 column "${field.name}"`);
    return special;
  }
  return v;
}

const SPECIAL_FLOATS = new Map([
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
]);

const COMPARE_OPS: readonly CompareOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];

/** `c op v`, by the Expr method of the comparison's own name. */
function compare(c: Expr, op: CompareOp, v: ExprLike, column: string): Expr {
  if (!COMPARE_OPS.includes(op))
    fail(`unknown comparison "${String(op)}" in a filter on "${column}"; use ${COMPARE_OPS.join(", ")}`);
  return c[op](v);
}

function filterExpr(df: DataFrame, f: ResultFilter): Expr {
  const field = df.schema.find((x) => x.name === f.column) ?? fail(`no column "${f.column}" to filter on`);
  const c = col(f.column);
  switch (f.kind) {
    case "isNull":
      return c.isNull();
    case "range": {
      if (f.min === undefined && f.max === undefined) fail(`a range filter on "${f.column}" needs min or max`);
      const lo = f.min === undefined || f.min === null ? null : c.ge(filterValue(field, f.min));
      const hi = f.max === undefined || f.max === null ? null : c.le(filterValue(field, f.max));
      return lo && hi ? lo.and(hi) : (lo ?? hi)!;
    }
    case "notNull":
      return c.isNotNull();
    case "compare":
      if (f.value === null || f.value === undefined)
        fail(`a comparison filter on "${f.column}" needs a value; use isNull / notNull for nulls`);
      return compare(c, f.op, filterValue(field, f.value), f.column);
    case "contains":
    case "startsWith": {
      if (field.type !== "string") fail(`"${f.column}" is ${field.type}; a text filter needs a string column`);
      const text = f.ignoreCase ? engineLower(f.text) : f.text;
      const s = f.ignoreCase ? c.str.lower() : c;
      return f.kind === "contains" ? s.str.contains(text, { literal: true }) : s.str.startsWith(text);
    }
    default:
      return fail(`unknown filter kind "${String((f as { kind: unknown }).kind)}"`);
  }
}

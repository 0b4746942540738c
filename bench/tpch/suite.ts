/**
 * The TPC-H suite: the 22 queries at scale factor `--sf` over the Parquet files of
 * `npm run tpch:gen` (generated into `<data-dir>/tpch-sf<sf>` unless already there).
 * DuckDB runs its own SQL (sql.ts), Polars the lazy queries of polars.ts, and Basin
 * the pipelines users run (`bench/tpch/qNN.ts`, each reading its tables from
 * BASIN_TPCH_DIR): each is loaded once, and its plan's Parquet scans are pointed at
 * the contender's tables — the files themselves (`basin`) or the tables persisted in
 * memory (`basin-mem`, `basin-gpu`).
 */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as api from "../../engine/api/index.js";
import type { PlanNode } from "../../engine/common/plan.js";
import { loadPipeline } from "../../engine/session/load_pipeline.js";
import type { Dataset } from "../data_file.js";
import type { Question } from "../questions.js";
import type { Suite, SuiteParams } from "../suites.js";
import { ensureTpch, TPCH_TABLES, tpchReady } from "./gen/generate.js";
import { TPCH_POLARS } from "./polars.js";
import { tpchSql } from "./sql.js";

/** What each query computes, and the columns its answers are sorted by and compared on exactly. */
const QUERIES: readonly (readonly [string, string[]])[] = [
  ["pricing summary report", ["l_returnflag", "l_linestatus"]],
  ["minimum cost supplier", ["p_partkey", "s_name", "n_name", "p_mfgr", "s_address", "s_phone", "s_comment"]],
  ["shipping priority", ["l_orderkey", "o_orderdate", "o_shippriority"]],
  ["order priority checking", ["o_orderpriority", "order_count"]],
  ["local supplier volume", ["n_name"]],
  ["forecasting revenue change", []],
  ["volume shipping", ["supp_nation", "cust_nation", "l_year"]],
  ["national market share", ["o_year"]],
  ["product type profit measure", ["nation", "o_year"]],
  ["returned item reporting", ["c_custkey", "c_name", "n_name", "c_address", "c_phone", "c_comment"]],
  ["important stock identification", ["ps_partkey"]],
  ["shipping modes and order priority", ["l_shipmode", "high_line_count", "low_line_count"]],
  ["customer distribution", ["c_count", "custdist"]],
  ["promotion effect", []],
  ["top supplier", ["s_suppkey", "s_name", "s_address", "s_phone"]],
  ["parts/supplier relationship", ["p_brand", "p_type", "p_size", "supplier_cnt"]],
  ["small-quantity-order revenue", []],
  ["large volume customer", ["o_orderkey", "c_name", "c_custkey", "o_orderdate"]],
  ["discounted revenue", []],
  ["potential part promotion", ["s_name", "s_address"]],
  ["suppliers who kept orders waiting", ["s_name", "numwait"]],
  ["global sales opportunity", ["cntrycode", "numcust"]],
];

/** The repository's root (this module runs from bench/tpch/ in TypeScript, dist/bench/tpch/ transpiled). */
function repoRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, import.meta.url.endsWith(".ts") ? "../.." : "../../..");
}

/** The pipeline file of query `n`: bench/tpch/q01.ts … q22.ts. */
export function tpchPipelineFile(n: number): string {
  return join(repoRoot(), "bench", "tpch", `q${String(n).padStart(2, "0")}.ts`);
}

/** The generated data the questions run on (set by the suite's `data`). */
interface Loaded {
  sf: number;
  /** Absolute path of each table's Parquet file. */
  paths: Map<string, string>;
  /** Each query's pipeline plan, or why it could not be loaded. */
  plans: Map<number, PlanNode | Error>;
}
let loaded: Loaded | null = null;

function current(): Loaded {
  if (!loaded) throw new Error("tpch: the suite's data was not prepared");
  return loaded;
}

/**
 * `plan` with every single-file Parquet scan of a dataset table replaced by that
 * table's frame in `frames`; shared subplans stay shared. A scan of any other file is
 * an error when the frames are not scans themselves (an in-memory run must not read files).
 */
export function retarget(plan: PlanNode, paths: Map<string, string>, frames: Record<string, api.DataFrame>): PlanNode {
  const byPath = new Map<string, PlanNode>();
  for (const [table, path] of paths) {
    const f = frames[table];
    if (f) byPath.set(path, f.node);
  }
  const inMemory = [...byPath.values()].some((n) => n.kind !== "scanFile");
  const seen = new Map<object, unknown>();
  const visit = (v: unknown): unknown => {
    if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) return v;
    const hit = seen.get(v);
    if (hit !== undefined) return hit;
    let out: unknown;
    const o = v as Record<string, unknown>;
    if (o.kind === "scanFile" && o.format === "parquet" && Array.isArray(o.files)) {
      const target = o.files.length === 1 ? byPath.get(resolve(String(o.files[0]))) : undefined;
      if (!target && inMemory)
        throw new Error(`tpch: the pipeline reads ${String(o.files)}, not a table of the dataset`);
      if (target && (o.predicate !== undefined || o.rowGroups !== undefined))
        throw new Error("tpch: a pipeline's scan came with a filter already pushed into it");
      out = target
        ? Array.isArray(o.columns)
          ? new api.DataFrame(target).select(...(o.columns as string[])).node
          : target
        : v;
    } else if (Array.isArray(v)) out = v.map(visit);
    else out = Object.fromEntries(Object.entries(o).map(([k, x]) => [k, visit(x)]));
    seen.set(v, out);
    return out;
  };
  return visit(plan) as PlanNode;
}

/** Loads each query's Basin pipeline once, with BASIN_TPCH_DIR pointing at `dir`. */
async function loadPipelines(dir: string, log: (msg: string) => void): Promise<Map<number, PlanNode | Error>> {
  const plans = new Map<number, PlanNode | Error>();
  const before = process.env.BASIN_TPCH_DIR;
  process.env.BASIN_TPCH_DIR = dir;
  try {
    for (let n = 1; n <= QUERIES.length; n++) {
      const file = tpchPipelineFile(n);
      if (!existsSync(file)) continue;
      try {
        const frame = await loadPipeline(file);
        if (!(frame instanceof api.DataFrame)) throw new Error(`${file}: the default export is not a DataFrame`);
        plans.set(n, frame.node);
      } catch (e) {
        const err = e instanceof Error ? e : new Error(String(e));
        log(`tpch q${n}: the Basin pipeline did not load: ${err.message.split("\n")[0]}`);
        plans.set(n, err);
      }
    }
  } finally {
    if (before === undefined) delete process.env.BASIN_TPCH_DIR;
    else process.env.BASIN_TPCH_DIR = before;
  }
  return plans;
}

function question(n: number): Question {
  const [description, keys] = QUERIES[n - 1]!;
  const hasPipeline = existsSync(tpchPipelineFile(n));
  return {
    id: `q${String(n).padStart(2, "0")}`,
    description,
    keys,
    get duckdb() {
      return tpchSql(n, current().sf);
    },
    polars: (t) => TPCH_POLARS[n - 1]!(t, current().sf),
    basin: hasPipeline
      ? (frames) => {
          const { plans, paths } = current();
          const plan = plans.get(n);
          if (plan === undefined) throw new Error(`no pipeline ${tpchPipelineFile(n)}`);
          if (plan instanceof Error) throw plan;
          return new api.DataFrame(retarget(plan, paths, frames as Record<string, api.DataFrame>));
        }
      : null,
  };
}

/** The data of scale factor `p.sf`: generated (in worker threads) unless complete already. */
async function tpchData(p: SuiteParams): Promise<Dataset> {
  const dir = resolve(p.dataDir, `tpch-sf${p.sf}`);
  const reused = tpchReady(dir, p.sf);
  const t0 = performance.now();
  await ensureTpch(p.sf, dir, { log: p.log });
  const paths = new Map(TPCH_TABLES.map((t) => [t, join(dir, `${t}.parquet`)]));
  loaded = { sf: p.sf, paths, plans: await loadPipelines(dir, p.log) };
  return {
    name: `tpch-sf${p.sf}`,
    tables: TPCH_TABLES.map((t) => ({ name: t, path: paths.get(t)!, schema: {}, format: "parquet" as const })),
    reused,
    seconds: reused ? 0 : (performance.now() - t0) / 1000,
  };
}

export const TPCH_SUITE: Suite = {
  name: "tpch",
  questions: QUERIES.map((_, i) => question(i + 1)),
  data: tpchData,
  describe: (p) => `SF ${p.sf}, Parquet`,
  rtol: 1e-9,
};

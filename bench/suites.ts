/**
 * The benchmark suites: which data each generates and which questions it asks.
 * Everything else (contenders, timing, checks, the table) is shared.
 */
import type { Dataset } from "./data_file.js";
import { runE2e } from "./e2e.js";
import { generateGroupby } from "./generate.js";
import { generateJoin, joinTableRows } from "./generate_join.js";
import { JOIN_QUESTIONS } from "./join_questions.js";
import { GROUPBY_QUESTIONS, type Question } from "./questions.js";
import { TPCH_SUITE } from "./tpch/suite.js";

/** Generator parameters a suite may use. */
export interface SuiteParams {
  rows: number;
  k: number;
  /** TPC-H scale factor. */
  sf: number;
  dataDir: string;
  log: (msg: string) => void;
}

/** One suite of db-benchmark questions over one dataset. */
export interface Suite {
  name: "groupby" | "join" | "tpch";
  questions: readonly Question[];
  /** Generates the data, or reuses complete files. */
  data(p: SuiteParams): Promise<Dataset>;
  /** The dataset's parameters for the section title, e.g. `1e7 rows, K=100`. */
  describe(p: SuiteParams): string;
  /** Relative tolerance of numbers in the answers' check (default 1e-6). */
  rtol?: number;
}

/** All suites, in run order. */
export const SUITES: readonly Suite[] = [
  {
    name: "groupby",
    questions: GROUPBY_QUESTIONS,
    data: (p) => generateGroupby({ rows: p.rows, k: p.k, dir: p.dataDir, log: p.log }),
    describe: (p) => `${p.rows} rows, K=${p.k}`,
  },
  {
    name: "join",
    questions: JOIN_QUESTIONS,
    data: (p) => generateJoin({ rows: p.rows, dir: p.dataDir, log: p.log }),
    describe: (p) => {
      const n = joinTableRows(p.rows);
      return `x ${n.x} rows, small ${n.small}, medium ${n.medium}, big ${n.big}`;
    },
  },
  TPCH_SUITE,
];

/** Suites that run their own way rather than as contenders in this process, by name. */
export const PROCESS_SUITES = {
  /** Fresh `basin run --output` processes against DuckDB's COPY (bench/e2e.ts). */
  e2e: runE2e,
} as const;

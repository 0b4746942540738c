/**
 * The 5 db-benchmark join questions. Each is one equi-join of `x` with a right
 * table, described once ({@link JoinSpec}) and turned into DuckDB SQL, a Polars and a
 * Basin query with the same output: x's columns, then the right table's non-key
 * columns, those whose names clash with x's suffixed `_<right table>` (`id4_small`).
 */
import { JOIN_SCHEMAS, type JoinTable } from "./generate_join.js";
import type { Question } from "./questions.js";

/** One join question: `x <how> join <right> on <on>`. */
export interface JoinSpec {
  id: string;
  description: string;
  right: Exclude<JoinTable, "x">;
  on: string;
  how: "inner" | "left";
}

/** The join output's right-hand columns: [source column, output name]. */
function rightColumns(spec: JoinSpec): [string, string][] {
  const left = Object.keys(JOIN_SCHEMAS.x);
  return Object.keys(JOIN_SCHEMAS[spec.right])
    .filter((c) => c !== spec.on)
    .map((c) => [c, left.includes(c) ? `${c}_${spec.right}` : c]);
}

/** Builds the {@link Question} for a join spec. */
export function joinQuestion(spec: JoinSpec): Question {
  const { right, on, how } = spec;
  const suffix = `_${right}`;
  const rightCols = rightColumns(spec);
  const select = ["x.*", ...rightCols.map(([c, out]) => `${right}.${c} AS ${out}`)].join(", ");
  const ids = [...Object.keys(JOIN_SCHEMAS.x), ...rightCols.map(([, out]) => out)].filter((c) => c.startsWith("id"));
  return {
    id: spec.id,
    description: spec.description,
    keys: ids,
    duckdb: `SELECT ${select} FROM x ${how === "left" ? "LEFT " : ""}JOIN ${right} USING (${on})`,
    polars: (t) => t.x.join(t[right], { on, how, suffix }),
    basin: (t) => t.x.join(t[right], { on, how, suffix }),
  };
}

const SPECS: readonly JoinSpec[] = [
  { id: "q1", description: "small inner on int", right: "small", on: "id1", how: "inner" },
  { id: "q2", description: "medium inner on int", right: "medium", on: "id2", how: "inner" },
  { id: "q3", description: "medium outer on int", right: "medium", on: "id2", how: "left" },
  { id: "q4", description: "medium inner on factor", right: "medium", on: "id5", how: "inner" },
  { id: "q5", description: "big inner on int", right: "big", on: "id3", how: "inner" },
];

/** The join questions q1–q5. */
export const JOIN_QUESTIONS: readonly Question[] = SPECS.map(joinQuestion);

import { BasinError } from "../common/errors.js";
import type { NamedExpr, PlanNode } from "../common/plan.js";
import { isNumeric, type Field } from "../common/types.js";
import { DataFrame } from "./dataframe.js";
import { callerLocation } from "./source_location.js";

export interface ConcatOptions {
  /** "vertical" (the only kind so far): the rows of every frame, one frame after another. */
  how?: "vertical";
}

/**
 * Stacks frames vertically: the rows of the first frame, then of the second, and so
 * on. Columns match by name (the first frame's order wins) and must have one type;
 * int64 and float64 widen to float64.
 *
 * @example
 * const all = concat([readCsv("2023/*.csv"), readCsv("2024/*.csv")]);
 */
export function concat(frames: DataFrame[], options: ConcatOptions = {}): DataFrame {
  const loc = callerLocation();
  const fail = (message: string): never => {
    throw new BasinError("BASIN_PLAN", message, loc);
  };
  if (!Array.isArray(frames) || frames.length === 0)
    fail("concat() needs a non-empty array of frames, as in concat([a, b])");
  frames.forEach((f, i) => f instanceof DataFrame || fail(`concat() frames[${i}] is not a DataFrame`));
  const how = options?.how ?? "vertical";
  if (how !== "vertical") fail(`concat() how must be "vertical", got ${JSON.stringify(how)}`);
  const schema: Field[] = frames[0].schema.map((f) => ({ ...f }));
  frames.slice(1).forEach((frame, k) => {
    const i = k + 1;
    for (const f of frame.schema)
      if (!schema.some((s) => s.name === f.name))
        fail(
          `concat() frames[${i}] has a column "${f.name}" that frames[0] lacks; frames must have the same columns (select or drop to align them)`,
        );
    for (const s of schema) {
      const f = frame.schema.find((x) => x.name === s.name);
      if (!f)
        return fail(
          `concat() frames[${i}] lacks column "${s.name}" of frames[0]; frames must have the same columns (select or drop to align them)`,
        );
      if (f.type === s.type) continue;
      if (isNumeric(f.type) && isNumeric(s.type)) s.type = "float64";
      else
        fail(
          `concat() column "${s.name}" is ${s.type} in frames[0] but ${f.type} in frames[${i}]; cast one with withColumns({ ${s.name}: col("${s.name}").cast(...) })`,
        );
    }
  });
  // Every input gets exactly the output schema: reordered and widened where needed.
  const inputs = frames.map((frame): PlanNode => {
    const same =
      frame.schema.length === schema.length &&
      frame.schema.every((f, j) => f.name === schema[j].name && f.type === schema[j].type);
    if (same) return frame.node;
    const exprs: NamedExpr[] = schema.map((s) => {
      const f = frame.schema.find((x) => x.name === s.name)!;
      return {
        name: s.name,
        expr:
          f.type === s.type
            ? { kind: "col", name: s.name }
            : { kind: "cast", arg: { kind: "col", name: s.name }, to: s.type },
      };
    });
    return { kind: "project", input: frame.node, exprs, schema, loc };
  });
  if (inputs.length === 1) return new DataFrame(inputs[0]);
  return new DataFrame({ kind: "union", inputs, schema, loc });
}

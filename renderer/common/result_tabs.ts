// Naming for a run's results: the tab label of each, and where an export goes by default.
import type { ExportFormat, ResultInfo } from "../../engine/common/rpc.js";

/**
 * @example
 * resultLabel({ name: "by city", … }) // "by city"; the default export is "default"
 */
export function resultLabel(r: Pick<ResultInfo, "name">): string {
  return r.name ?? "default";
}

/**
 * The suggested export path: next to the pipeline file, named after it and the result.
 *
 * @example
 * exportPathFor("jobs/taxi.ts", { name: "by city" }, "parquet") // "jobs/taxi-by-city.parquet"
 */
export function exportPathFor(pipeline: string | undefined, r: Pick<ResultInfo, "name">, format: ExportFormat): string {
  const file = pipeline ?? "result.ts";
  const slash = file.lastIndexOf("/");
  const dir = file.slice(0, slash + 1);
  const stem = file.slice(slash + 1).replace(/\.[cm]?[jt]sx?$/, "") || "result";
  const suffix = r.name
    ? `-${r.name
        .trim()
        .replace(/[^\p{L}\p{N}._-]+/gu, "-")
        .replace(/^-+|-+$/g, "")}`
    : "";
  return `${dir}${stem}${suffix === "-" ? "" : suffix}.${format}`;
}

/**
 * Bags: `import { bag } from "basin"`.
 *
 * @example
 * import { bag } from "basin";
 * export default bag.readJson("events.ndjson").pluck("user").frequencies();
 */
import { fromItems, readJson, readText } from "./sources.js";

export const bag = { fromItems, readText, readJson };
export { Bag, type FoldByOptions, type KeyArg, type PluckOptions, type TopKOptions } from "./bag.js";
export type { FromItemsOptions, ReadTextOptions } from "./sources.js";

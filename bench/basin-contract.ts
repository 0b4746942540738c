/** The Basin API as the benchmark uses it: the engine's own module and types. */
import * as api from "../engine/api/index.js";

export type BasinApi = typeof api;
export type BasinFrame = api.DataFrame;

/** The Basin API module (kept behind a function so a broken engine shows as an error row). */
export async function loadBasin(): Promise<BasinApi | Error> {
  return api;
}

// A stored result moved into JS memory without copies: string offsets cross as the
// store's int64 and become the doubles JsStrings holds when first read.
import { native, type Handle, type JsStrings, type JsTable, type TakenStrings } from "../native/addon.js";

/**
 * The table as JS arrays (which must only be read), releasing `h`; see
 * `takeTableToJs`. Reading a string column's offsets converts them, once.
 *
 * @example
 * const js = takeTable(handle); // handle is released
 */
export function takeTable(h: Handle): JsTable {
  const t = native().takeTableToJs(h);
  for (const c of t.columns) if (c.type === "string") convertOnRead(c.values as TakenStrings);
  return t as JsTable; // every TakenStrings now reads as JsStrings
}

// Gives `raw` the shape of JsStrings: `offsets` converted on first read, `offsets64` hidden.
function convertOnRead(raw: TakenStrings): void {
  let doubles: Float64Array | undefined;
  Object.defineProperty(raw, "offsets64", { enumerable: false });
  Object.defineProperty(raw, "offsets", {
    enumerable: true,
    get: (): JsStrings["offsets"] => (doubles ??= int64ToDoubles(raw.offsets64)),
  });
}

/** Non-negative int64s below 2^53 as doubles, read as little-endian 32-bit halves (no BigInt per value). */
function int64ToDoubles(v: BigInt64Array): Float64Array {
  const halves = new Uint32Array(v.buffer, v.byteOffset, v.length * 2);
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = halves[2 * i] + halves[2 * i + 1] * 4294967296;
  return out;
}

/**
 * Lets JS collect the results it no longer reaches, so that stored buffers only they
 * shared are freed: for leak checks and between benchmark runs, under node's --expose-gc.
 *
 * @example
 * await collectResults(); // then native().storeStats() counts only live tables
 */
export async function collectResults(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("collecting results needs node's --expose-gc flag (npm test and npm run bench pass it)");
  // Finalizers run after the collection, and what they free can let more be collected.
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

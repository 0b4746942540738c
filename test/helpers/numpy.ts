// NumPy as the oracle for arrays: inputs written as .npy, one python3 process
// evaluates every case's expression, results read back and compared.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { decodeNpy, encodeNpy, type NpyArray } from "../../engine/io/npy.js";

export interface NumpyCase {
  name: string;
  /** Input arrays by variable name. */
  inputs: Record<string, NpyArray>;
  /** A Python expression over the inputs and `np`, e.g. "a + a.T - a.mean(axis=0)". */
  code: string;
}

/**
 * Evaluates every case with NumPy in one python3 process.
 *
 * @example
 * const out = numpy([{ name: "t", inputs: { a }, code: "a.T" }]); out.get("t")
 */
export function numpy(cases: NumpyCase[]): Map<string, NpyArray> {
  const dir = mkdtempSync(join(tmpdir(), "basin-np-"));
  try {
    const spec = cases.map((c, i) => {
      const inputs: Record<string, string> = {};
      for (const [k, v] of Object.entries(c.inputs)) {
        const f = join(dir, `in${i}_${k}.npy`);
        writeFileSync(f, encodeNpy(v));
        inputs[k] = f;
      }
      return { inputs, code: c.code, out: join(dir, `out${i}.npy`) };
    });
    writeFileSync(join(dir, "cases.json"), JSON.stringify(spec));
    const script = [
      "import json, sys, numpy as np",
      "np.seterr(all='ignore')",
      "for c in json.load(open(sys.argv[1])):",
      "    env = {k: np.load(f) for k, f in c['inputs'].items()}",
      "    env['np'] = np",
      "    r = np.asarray(eval(c['code'], env))",
      "    if r.dtype == np.bool_: r = r.astype(np.bool_)",
      "    np.save(c['out'], np.ascontiguousarray(r) if r.ndim else r)  # ascontiguousarray makes 0-d 1-d",
    ].join("\n");
    execFileSync("python3", ["-c", script, join(dir, "cases.json")], { stdio: ["ignore", "pipe", "pipe"] });
    return new Map(cases.map((c, i) => [c.name, decodeNpy(readFileSync(spec[i].out), c.name)]));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const num = (v: number | bigint) => Number(v);

/**
 * Asserts same shape, dtype and values: floats within a tolerance scaled by the
 * result's magnitude (chunked sums add in another order than NumPy's pairwise
 * sum), NaN equal to NaN, infinities exact.
 *
 * @example
 * expectSameArray(await y.compute(), out.get("t")!, "t");
 */
export function expectSameArray(
  actual: NpyArray,
  expected: NpyArray,
  label: string,
  opts: { dtype?: boolean; rtol?: number } = {},
): void {
  expect(actual.shape, `${label}: shape`).toEqual(expected.shape);
  if (opts.dtype !== false) expect(actual.dtype, `${label}: dtype`).toBe(expected.dtype);
  const a = Array.from(actual.data as ArrayLike<number>, num);
  const e = Array.from(expected.data as ArrayLike<number>, num);
  let scale = 1;
  for (const v of e) if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v));
  const tol = (opts.rtol ?? 1e-9) * scale;
  for (let i = 0; i < e.length; i++) {
    const x = a[i],
      y = e[i];
    const ok =
      (Number.isNaN(x) && Number.isNaN(y)) ||
      x === y ||
      (Number.isFinite(x) && Number.isFinite(y) && Math.abs(x - y) <= tol);
    if (!ok) expect(`${label}: element ${i} = ${x}`).toBe(`${label}: element ${i} = ${y}`);
  }
}

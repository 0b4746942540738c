// delayed / compute / submit against the same functions called directly in
// TypeScript, on a 1-worker and a 4-worker cluster; parallelism measured with tasks
// that block their thread (Atomics.wait: no CPU, so a busy machine does not matter).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BasinError,
  bag,
  closeDefaultCluster,
  compute,
  computeWith,
  configureDefaultCluster,
  delayed,
  LocalCluster,
  submit,
} from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import { WORDS } from "../helpers/data.js";
import { thrown, rejected, sourceLocator } from "../helpers/errors.js";

const loc = sourceLocator(import.meta.url);
// Plain functions: called directly as the reference, and as delayed tasks.
const makePart = (seed: number, n: number): { word: string; v: number }[] => {
  let s = (seed * 2654435761) % 4294967296;
  const words = ["Zürich", "東京", "naïve", "🙂 smile", "plain"];
  return Array.from({ length: n }, () => {
    s = (s * 1664525 + 1013904223) % 4294967296;
    return { word: words[s % words.length], v: (s % 1000) - 500 };
  });
};
const countWords = (part: { word: string; v: number }[]): Record<string, number> => {
  const c: Record<string, number> = {};
  for (const r of part) c[r.word] = (c[r.word] ?? 0) + 1;
  return c;
};
const merge = (counts: Record<string, number>[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const c of counts) for (const [k, n] of Object.entries(c)) out[k] = (out[k] ?? 0) + n;
  return out;
};
const stats = (part: { v: number }[], scale: number) => ({
  sum: part.reduce((a, r) => a + r.v, 0) * scale,
  vs: Float64Array.from(part, (r) => r.v * scale),
});

describe.each([1, 4])("delayed on %i worker(s)", (workers) => {
  let cluster: LocalCluster;
  beforeAll(() => {
    cluster = new LocalCluster({ workers });
  });
  afterAll(async () => {
    await cluster.close();
  });

  it("a graph of calls equals the direct calls; shared inputs, nesting in arrays and objects", async () => {
    const r = seededRandom(workers);
    const sizes = [0, 1, 57, 0, 300, Math.floor(r() * 100)]; // empty and one-item parts
    const parts = sizes.map((n, i) => delayed(makePart)(i, n));
    const counts = parts.map((p) => delayed(countWords)(p));
    const total = delayed(merge)(counts);
    const scaled = delayed(stats)(parts[4], 2);
    const [t, s, nested, plain] = await computeWith(
      { cluster },
      total,
      scaled,
      { first: parts[2], both: [counts[2], "x"] },
      42,
    );
    const refParts = sizes.map((n, i) => makePart(i, n));
    expect(t).toEqual(merge(refParts.map(countWords)));
    expect(s.sum).toBe(stats(refParts[4], 2).sum);
    expect(s.vs).toBeInstanceOf(Float64Array); // structured-clone values survive
    expect([...s.vs]).toEqual([...stats(refParts[4], 2).vs]);
    expect(nested).toEqual({ first: refParts[2], both: [countWords(refParts[2]), "x"] });
    expect(plain).toBe(42);
    expect(await delayed((a: string, b: string) => a + b)("東京", WORDS[3]).compute({ cluster })).toBe("東京🙂 smile");
  });

  it("independent calls run in parallel", async () => {
    const nap = delayed((ms: number, i: number) => {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
      return i;
    });
    const t0 = performance.now();
    const got = await computeWith({ cluster }, ...[0, 1, 2, 3].map((i) => nap(250, i)));
    const ms = performance.now() - t0;
    expect(got).toEqual([0, 1, 2, 3]);
    if (workers === 4) expect(ms).toBeLessThan(750);
    else expect(ms).toBeGreaterThanOrEqual(990);
  });

  it("a function that throws fails the run with its name and the line of the call", async () => {
    const check = delayed(function checkPositive(x: number) {
      if (x < 0) throw new RangeError(`negative: ${x}`);
      return x;
    });
    const e = await rejected(computeWith({ cluster }, check(1), check(-5))); // @throw
    expect(e.code).toBe("BASIN_FUNCTION");
    expect(e.location).toBe(loc("throw", "check(-5)"));
    expect(e.detail).toBe('delayed function "checkPositive" threw RangeError: negative: -5');
    const asyncFn = delayed(async (x: number) => x);
    expect((await rejected(computeWith({ cluster }, asyncFn(1)))).detail).toContain("returned a Promise");
  });
});

describe("futures", () => {
  beforeAll(() => configureDefaultCluster({ workers: 4 }));
  afterAll(async () => {
    await closeDefaultCluster();
    configureDefaultCluster({});
  });

  it("submit runs calls in parallel; each future fails on its own", async () => {
    await Promise.all([1, 2, 3, 4].map((n) => submit((x: number) => x, n).result())); // starts the workers
    const t0 = performance.now();
    const futs = [1, 2, 3, 4].map((n) =>
      submit((x: number) => {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 250);
        if (x === 3) throw new Error(`three is bad, ${"ünïcode"}`);
        return x * x;
      }, n),
    );
    const results = await Promise.allSettled(futs.map((f) => f.result()));
    expect(performance.now() - t0).toBeLessThan(750);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as BasinError).detail))).toEqual([
      1,
      4,
      'delayed function "anonymous" threw Error: three is bad, ünïcode',
      16,
    ]);
    expect(futs.every((f) => f.done)).toBe(true);
    // a future's value feeds another call; delayed values may be arguments too
    const sq = await futs[1].result();
    expect(await submit((a: number, b: number[]) => a + b.length, sq, delayed((n: number) => [n, n])(1)).result()).toBe(
      6,
    );
    expect(await compute(delayed(countWords)(makePart(1, 10)))).toEqual([countWords(makePart(1, 10))]);
  });
});

describe("delayed errors at the call site", () => {
  it("captured variables, functions and class instances as arguments", () => {
    const offset = 10;
    const e = thrown(() => delayed((x: number) => x + offset)); // @capture
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.location).toBe(loc("capture", "delayed("));
    expect(e.detail).toContain(
      'the function passed to delayed (function "anonymous") uses "offset" from outside the function',
    );
    expect(() => delayed((x: number) => x + offset, { with: { offset } })).not.toThrow();
    const id = delayed((x: unknown) => x);
    expect(thrown(() => id(() => 1)).detail).toContain("argument 1 of anonymous is a function");
    expect(thrown(() => id(bag.fromItems([1]))).detail).toContain("is a Bag; compute it first");
    class Point {
      constructor(readonly x: number) {}
    }
    expect(thrown(() => id({ p: [new Point(1)] })).detail).toContain(
      "argument 1 of anonymous.p[0] is a Point, which would lose its class",
    );
  });
});

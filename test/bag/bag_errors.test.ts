// Mistakes with bags: functions that capture outer variables (rejected where they are
// written, naming the variable), functions that throw in a task (named, with the
// pipeline line), bad JSON lines (file:line), and values that are not JSON.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bag, LocalCluster } from "../../engine/api/index.js";
import { thrown, rejected, sourceLocator } from "../helpers/errors.js";

const loc = sourceLocator(import.meta.url);

describe("bag errors", () => {
  let cluster: LocalCluster;
  let dir: string;
  beforeAll(() => {
    cluster = new LocalCluster({ workers: 2 });
    dir = mkdtempSync(join(tmpdir(), "basin-bag-err-"));
  });
  afterAll(async () => {
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const items = () => bag.fromItems([{ a: 1, s: "Zürich" }, { a: 2, s: "東京" }, { a: 3 }], { partitions: [1, 0, 2] });

  it("a function using an outer variable is rejected at the call, naming the variable", () => {
    const factor = 3;
    const limit = { min: 1 };
    const e = thrown(() => items().map((x) => x.a * factor + limit.min)); // @capture
    expect(e.code).toBe("BASIN_PLAN");
    expect(e.location).toBe(loc("capture", "map("));
    expect(e.detail).toContain('uses "factor", "limit" from outside the function');
    expect(e.detail).toContain("{ with: { factor, limit } }");
    // passing them explicitly is fine; locals, parameters, globals and nested scopes are not captures
    expect(() => items().map((x) => x.a * factor + limit.min, { with: { factor, limit } })).not.toThrow();
    expect(() =>
      items().map((x) => {
        const { a, ...rest } = x;
        let t = 0;
        for (const [k, v] of Object.entries(rest)) t += k.length + String(v).length;
        function sq(n: number): number {
          return n * n;
        }
        try {
          JSON.parse("{");
        } catch (err) {
          t += (err as Error).message.length > 0 ? 1 : 0;
        }
        return [a, t, sq(a), Math.max(a, 1), [1, 2].map((y) => y + a)];
      }),
    ).not.toThrow();
    // an outer function is a capture too; pass it with `with`
    const helper = (n: number) => n + 1;
    expect(thrown(() => items().filter((x) => helper(x.a) > 2)).detail).toContain('uses "helper"');
  });

  it("key functions, foldBy functions and `with` values are checked the same way", () => {
    const k = "s";
    expect(thrown(() => items().groupBy((x) => x[k as "s"])).detail).toContain(
      'the key function of groupBy (function "anonymous") uses "k"',
    );
    const zero = 0;
    expect(thrown(() => items().foldBy("s", (acc: number, x) => acc + x.a + zero)).detail).toContain(
      'the binop of foldBy (function "anonymous") uses "zero"',
    );
    expect(thrown(() => items().map((x) => x, { with: { d: new Date(0) } })).detail).toContain(
      "with.d is a Date; values passed with `with` must be JSON values",
    );
    expect(thrown(() => items().map(Math.sqrt as never)).detail).toContain("built-in or bound function");
    expect(thrown(() => bag.fromItems([1, { x: undefined }])).detail).toContain("items[1].x is undefined");
    expect(thrown(() => bag.fromItems([1, 2], { partitions: [1, 2] })).detail).toContain(
      "must be non-negative integers adding up to 2",
    );
    expect(thrown(() => items().topK(-1)).detail).toContain("non-negative integer k");
    expect(thrown(() => items().toDataFrame({ a: "int32" as never })).detail).toContain(
      'type "int32" for "a" is not a Basin type',
    );
  });

  it("a function that throws in a task fails the run naming the function and the pipeline line", async () => {
    function parse(x: unknown): number {
      return (x as { q: { r: number } }).q.r;
    }
    const b = items().map(parse); // @throws
    const e = await rejected(b.compute({ cluster }));
    expect(e.code).toBe("BASIN_FUNCTION");
    expect(e.location).toBe(loc("throws", "map("));
    expect(e.detail).toMatch(/^map function "parse" threw TypeError: Cannot read properties of undefined/);
  });

  it("a function that calls process.exit fails the run at once, saying so at the pipeline line; the workers live on", async () => {
    const b = items().map((x) => (x.a > 1 ? globalThis.process.exit(3) : x)); // @exits
    const t0 = performance.now();
    const e = await rejected(b.compute({ cluster }));
    expect(e.code).toBe("BASIN_FUNCTION");
    expect(e.location).toBe(loc("exits", "map("));
    expect(e.detail).toContain("called process.exit(3), which would end the worker running it");
    expect(performance.now() - t0, "no worker restarts and retries").toBeLessThan(3000);
    expect((await items().compute({ cluster })).length).toBeGreaterThan(0);
  });

  it("results that are not JSON, flatMap without an array, pluck of a missing field", async () => {
    expect(
      (
        await rejected(
          items()
            .map((x) => (x.a > 1 ? undefined : x))
            .compute({ cluster }),
        )
      ).detail,
    ).toContain("returned undefined for item");
    expect(
      (
        await rejected(
          items()
            .flatMap((x) => x.a as never)
            .compute({ cluster }),
        )
      ).detail,
    ).toContain("it must return an array");
    const e = await rejected(items().pluck("s").compute({ cluster }));
    expect(e.detail).toContain('pluck: item {"a":3} has no field "s"; give a default');
    expect(await items().pluck("s", { default: null }).compute({ cluster })).toEqual(["Zürich", "東京", null]);
    // Every partition fails here; the first to fail names its own item.
    expect((await rejected(items().toDataFrame({ a: "string" }).compute({ cluster }))).detail).toMatch(
      /field "a" of item \{"a":(1,"s":"Zürich"|2,"s":"東京"|3)\} is [123], not string/,
    );
  });

  it("a bad JSON line names the file and line", async () => {
    const f = join(dir, "bad.ndjson");
    writeFileSync(f, '{"a": 1}\n[1, 2]\n\n"ünïcode"\n{"a": 2,}\n{"a": 3}\n');
    const e = await rejected(bag.readJson(f, { blocksize: 8 }).compute({ cluster })); // @badjson
    expect(e.code).toBe("BASIN_PARSE");
    expect(e.location).toBe(loc("badjson", "readJson("));
    expect(e.detail).toMatch(
      new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:5: not valid JSON .*: \\{"a": 2,\\}`),
    );
    expect(thrown(() => bag.readText(join(dir, "nope-*.txt"))).code).toBe("BASIN_IO");
  });
});

// Bags against a plain TypeScript reference on the same items: generated records with
// unicode, nested values, duplicate and skewed keys, empty and one-item partitions,
// on a 1-worker and a 4-worker cluster.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bag, LocalCluster, type Bag } from "../../engine/api/index.js";
import { seededRandom } from "../../engine/common/random.js";
import { WORDS } from "../helpers/data.js";

interface Rec {
  id: number;
  name: string;
  city: string | null;
  n: number;
  tags: string[];
  meta: { ok: boolean; score: number | null };
}

function makeRecs(count: number, seed = 11): Rec[] {
  const r = seededRandom(seed);
  const out: Rec[] = [];
  for (let i = 0; i < count; i++) {
    out.push({
      id: i,
      name: WORDS[Math.floor(r() * WORDS.length)],
      city: r() < 0.1 ? null : r() < 0.5 ? "Zürich" : WORDS[Math.floor(r() * WORDS.length)], // skewed
      n: Math.floor(r() * 50) - 10,
      tags: Array.from({ length: Math.floor(r() * 4) }, () => WORDS[Math.floor(r() * 3)]),
      meta: { ok: r() < 0.5, score: r() < 0.2 ? null : Math.round(r() * 1000) / 10 },
    });
  }
  return out;
}

const N = 400;
const RECS = makeRecs(N);
/** Empty, one-item and uneven partitions. */
const PARTS = [0, 1, N - 104, 0, 3, 100];

const byJson = (a: unknown, b: unknown) =>
  JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0;
const sorted = <T>(xs: T[]) => [...xs].sort(byJson);

function refGroup<T, K>(xs: T[], key: (x: T) => K): [K, T[]][] {
  const m = new Map<string, [K, T[]]>();
  for (const x of xs) {
    const k = key(x);
    const ks = JSON.stringify(k);
    if (!m.has(ks)) m.set(ks, [k, []]);
    m.get(ks)![1].push(x);
  }
  return [...m.values()];
}

describe.each([1, 4])("bags on %i worker(s)", (workers) => {
  let cluster: LocalCluster;
  let dir: string;
  beforeAll(() => {
    cluster = new LocalCluster({ workers });
    dir = mkdtempSync(join(tmpdir(), "basin-bag-"));
  });
  afterAll(async () => {
    await cluster.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = <T>(b: Bag<T>) => b.compute({ cluster });
  const recs = () => bag.fromItems(RECS, { partitions: PARTS });

  it("map, filter, flatMap and pluck keep the items' order", async () => {
    expect(await run(recs().map((r) => ({ id: r.id, twice: r.n * 2, upper: r.name.toUpperCase() })))).toEqual(
      RECS.map((r) => ({ id: r.id, twice: r.n * 2, upper: r.name.toUpperCase() })),
    );
    expect(await run(recs().filter((r) => r.meta.ok && r.n > 5))).toEqual(RECS.filter((r) => r.meta.ok && r.n > 5));
    expect(await run(recs().flatMap((r) => r.tags.map((t) => `${r.id}:${t}`)))).toEqual(
      RECS.flatMap((r) => r.tags.map((t) => `${r.id}:${t}`)),
    );
    expect(await run(recs().pluck("city"))).toEqual(RECS.map((r) => r.city));
    // A chain fuses into one step per partition; values passed with `with`.
    const k = 3,
      off = -1;
    const got = await run(
      recs()
        .filter((r) => r.city !== null)
        .map((r) => r.n * k + off, { with: { k, off } })
        .filter((x) => x % 2 === 0),
    );
    expect(got).toEqual(
      RECS.filter((r) => r.city !== null)
        .map((r) => r.n * 3 - 1)
        .filter((x) => x % 2 === 0),
    );
  });

  it("helper functions passed with `with` run on the workers too", async () => {
    const norm = (s: string) =>
      s
        .normalize("NFD")
        .replace(/[\u0300-\u036f]/g, "")
        .toLowerCase();
    expect(await run(recs().map((r) => norm(r.name), { with: { norm } }))).toEqual(RECS.map((r) => norm(r.name)));
  });

  it("groupBy by field and by function", async () => {
    const got = await run(recs().groupBy("city"));
    expect(sorted(got)).toEqual(sorted(refGroup(RECS, (r) => r.city)));
    const byParity = await run(recs().groupBy((r) => (r.n % 2 === 0 ? "even" : "odd")));
    expect(sorted(byParity)).toEqual(sorted(refGroup(RECS, (r) => (r.n % 2 === 0 ? "even" : "odd"))));
  });

  it("foldBy with initial and combine, and without (first item starts the fold)", async () => {
    const got = await run(
      recs().foldBy("city", (acc: number, r) => acc + r.n, { initial: 0, combine: (a, b) => a + b }),
    );
    const ref = refGroup(RECS, (r) => r.city).map(([k, rs]) => [k, rs.reduce((a, r) => a + r.n, 0)]);
    expect(sorted(got)).toEqual(sorted(ref));
    // No initial: max per name over numbers, binop also merging partials.
    const maxes = await run(
      recs()
        .map((r) => [r.name, r.n])
        .foldBy(
          (p) => p[0],
          (a: (string | number)[], b) => ((a[1] as number) >= (b[1] as number) ? a : b),
        ),
    );
    const refMax = refGroup(RECS, (r) => r.name).map(([k, rs]) => [k, [k, Math.max(...rs.map((r) => r.n))]]);
    expect(sorted(maxes)).toEqual(sorted(refMax));
  });

  it("frequencies, distinct and topK", async () => {
    const words = RECS.flatMap((r) => r.tags);
    const got = await run(
      recs()
        .flatMap((r) => r.tags)
        .frequencies(),
    );
    expect(sorted(got)).toEqual(sorted(refGroup(words, (w) => w).map(([w, ws]) => [w, ws.length])));
    expect(sorted(await run(recs().pluck("name").distinct()))).toEqual(sorted([...new Set(RECS.map((r) => r.name))]));
    // distinct by key keeps the first item of each key in bag order
    const firstPerCity = await run(recs().distinct("city"));
    expect(sorted(firstPerCity)).toEqual(sorted(refGroup(RECS, (r) => r.city).map(([, rs]) => rs[0])));
    // largest n first, ties in bag order
    const top = await run(recs().topK(7, "n"));
    expect(top).toEqual([...RECS].sort((a, b) => b.n - a.n || a.id - b.id).slice(0, 7));
    const bottom = await run(recs().topK(5, (r) => r.meta.score ?? 1e9, { descending: false }));
    expect(bottom).toEqual(
      [...RECS].sort((a, b) => (a.meta.score ?? 1e9) - (b.meta.score ?? 1e9) || a.id - b.id).slice(0, 5),
    );
    expect(await run(recs().topK(0, "n"))).toEqual([]);
  });

  it("empty bags and all-empty partitions", async () => {
    expect(await run(bag.fromItems([]))).toEqual([]);
    const empty = bag.fromItems([1, 2, 3], { partitions: [0, 3, 0] }).filter((x) => x > 10);
    expect(await run(empty)).toEqual([]);
    expect(await run(empty.frequencies())).toEqual([]);
    expect(await run(empty.topK(3))).toEqual([]);
  });

  it("readText and readJson read lines across files and partitions", async () => {
    const a = join(dir, "a.txt"),
      b = join(dir, "b.txt");
    const linesA = RECS.slice(0, 150).map((r) => `${r.id} ${r.name}`);
    writeFileSync(a, linesA.join("\r\n") + "\r\n"); // CRLF
    writeFileSync(b, "東京 last line without a break\n\nafter a blank");
    const text = await run(bag.readText(join(dir, "*.txt"), { blocksize: 512 }));
    // "line\nbreak" in WORDS splits into two lines, as it would for any line reader
    expect(text).toEqual([...linesA.join("\n").split("\n"), "東京 last line without a break", "", "after a blank"]);

    const j = join(dir, "recs.ndjson");
    writeFileSync(j, RECS.map((r) => JSON.stringify(r)).join("\n\n") + "\n");
    const json = bag.readJson<Rec>(j, { blocksize: 1000 });
    expect(await run(json)).toEqual(RECS);
    expect(sorted(await run(json.pluck("city").frequencies()))).toEqual(
      sorted(refGroup(RECS, (r) => r.city).map(([k, rs]) => [k, rs.length])),
    );
  });

  it("toDataFrame makes a frame of the items' fields", async () => {
    const df = recs()
      .map((r) => ({ id: r.id, city: r.city, score: r.meta.score, ok: r.meta.ok }))
      .toDataFrame({ id: "int64", city: "string", score: "float64", ok: "bool" });
    const t = await df.sort("id").compute({ cluster });
    expect(t.toRows()).toEqual(RECS.map((r) => ({ id: r.id, city: r.city, score: r.meta.score, ok: r.meta.ok })));
    expect(df.explain()).toContain("FromBag");
  });
});

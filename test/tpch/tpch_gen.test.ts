// The TPC-H generator (bench/tpch/gen) against the specification (v3, clause 4.2),
// checked by DuckDB reading the Parquet files it writes.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLORS, CONTAINERS, TYPES } from "../../bench/tpch/gen/dists.js";
import { generateTpch, TPCH_TABLES } from "../../bench/tpch/gen/generate.js";
import { Duck } from "../helpers/oracle.js";
import { tpchTestData } from "./tpch_data.js";

let dir = "";
let duck: Duck;
const cleanup: string[] = [];

beforeAll(async () => {
  dir = (await tpchTestData(0.01, true)).dir;
  cleanup.push(dir);
  duck = await Duck.open();
  for (const t of TPCH_TABLES) await duck.run(`CREATE VIEW ${t} AS SELECT * FROM '${join(dir, t)}.parquet'`);
});

afterAll(() => {
  duck?.close();
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const one = async (sql: string): Promise<unknown> => {
  const rows = await duck.rows(sql);
  const v = rows[0][0];
  return typeof v === "bigint" ? Number(v) : v;
};

/** Every row of `table` that breaks `rule` (a SQL condition that must hold), counted. */
const broken = (table: string, rule: string) => one(`SELECT count(*) FROM ${table} WHERE NOT (${rule})`);

describe("TPC-H generator at SF 0.01", () => {
  it("writes each table's row count as the specification scales it", async () => {
    const counts: Record<string, number> = {};
    for (const t of TPCH_TABLES) counts[t] = (await one(`SELECT count(*) FROM ${t}`)) as number;
    expect(counts).toMatchObject({
      region: 5,
      nation: 25,
      supplier: 100,
      customer: 1500,
      part: 2000,
      partsupp: 8000,
      orders: 15000,
    });
    // 1 to 7 lines per order, 4 on average.
    expect(
      await one(`SELECT min(n) = 1 AND max(n) = 7 FROM (SELECT count(*) n FROM lineitem GROUP BY l_orderkey)`),
    ).toBe(true);
    expect(counts.lineitem).toBeGreaterThan(15000 * 3.8);
    expect(counts.lineitem).toBeLessThan(15000 * 4.2);
  });

  it("types each column as Basin stores it: int64 keys, float64 money, dates, strings", async () => {
    const types = new Map<string, string>();
    for (const t of TPCH_TABLES)
      for (const [name, type] of await duck.rows(`SELECT column_name, column_type FROM (DESCRIBE ${t})`))
        types.set(name as string, type as string);
    expect(types.size).toBe(61);
    for (const k of ["l_orderkey", "l_partkey", "l_suppkey", "o_custkey", "ps_availqty", "p_size", "n_regionkey"])
      expect(types.get(k), k).toBe("BIGINT");
    for (const k of ["l_extendedprice", "l_discount", "o_totalprice", "p_retailprice", "c_acctbal", "ps_supplycost"])
      expect(types.get(k), k).toBe("DOUBLE");
    for (const k of ["l_shipdate", "l_commitdate", "l_receiptdate", "o_orderdate"])
      expect(types.get(k), k).toBe("DATE");
    for (const k of ["l_returnflag", "o_orderstatus", "c_mktsegment", "p_type", "s_comment"])
      expect(types.get(k), k).toBe("VARCHAR");
  });

  it("keeps every foreign key inside its table and every primary key unique", async () => {
    const orphans = {
      lineitemOrders: await one(`SELECT count(*) FROM lineitem ANTI JOIN orders ON l_orderkey = o_orderkey`),
      lineitemPartsupp: await one(
        `SELECT count(*) FROM lineitem ANTI JOIN partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey`,
      ),
      partsuppPart: await one(`SELECT count(*) FROM partsupp ANTI JOIN part ON ps_partkey = p_partkey`),
      partsuppSupplier: await one(`SELECT count(*) FROM partsupp ANTI JOIN supplier ON ps_suppkey = s_suppkey`),
      ordersCustomer: await one(`SELECT count(*) FROM orders ANTI JOIN customer ON o_custkey = c_custkey`),
      customerNation: await one(`SELECT count(*) FROM customer ANTI JOIN nation ON c_nationkey = n_nationkey`),
      supplierNation: await one(`SELECT count(*) FROM supplier ANTI JOIN nation ON s_nationkey = n_nationkey`),
      nationRegion: await one(`SELECT count(*) FROM nation ANTI JOIN region ON n_regionkey = r_regionkey`),
      ordersWithoutLines: await one(`SELECT count(*) FROM orders ANTI JOIN lineitem ON l_orderkey = o_orderkey`),
    };
    expect(
      Object.values(orphans).every((n) => n === 0),
      JSON.stringify(orphans),
    ).toBe(true);
    expect(await one(`SELECT count(DISTINCT o_orderkey) FROM orders`)).toBe(15000);
    expect(await one(`SELECT count(DISTINCT (l_orderkey, l_linenumber)) FROM lineitem`)).toBe(
      await one(`SELECT count(*) FROM lineitem`),
    );
    expect(await one(`SELECT count(DISTINCT (ps_partkey, ps_suppkey)) FROM partsupp`)).toBe(8000);
  });

  it("draws keys by the specification's rules: sparse order keys, no orders for every third customer, 4 suppliers per part", async () => {
    // Only the first 8 of every 32 order keys: 1..7, 32..39, 64..71, …
    expect(await broken("orders", "o_orderkey % 32 BETWEEN 1 AND 7 OR (o_orderkey % 32 = 0 AND o_orderkey > 0)")).toBe(
      0,
    );
    expect(await one(`SELECT max(o_orderkey) FROM orders`)).toBe(Math.floor(15000 / 8) * 32 + (15000 % 8));
    expect(await broken("orders", "o_custkey % 3 <> 0")).toBe(0);
    // Customers not divisible by 3 have orders (about 10 each at SF 0.01: all of them).
    expect(await one(`SELECT count(DISTINCT o_custkey) FROM orders`)).toBe(1000);
    // PS_SUPPKEY = (ps_partkey + i * (S/4 + (ps_partkey - 1) / S)) % S + 1, i = 0..3 (S = 100 suppliers).
    expect(
      await broken(
        "partsupp",
        `ps_suppkey IN (SELECT (ps_partkey + i * (25 + (ps_partkey - 1) // 100)) % 100 + 1 FROM range(4) t(i))`,
      ),
    ).toBe(0);
    expect(
      await one(
        `SELECT min(n) = 4 AND max(n) = 4 FROM (SELECT count(DISTINCT ps_suppkey) n FROM partsupp GROUP BY ps_partkey)`,
      ),
    ).toBe(true);
  });

  it("keeps values inside the specification's domains", async () => {
    const inList = (xs: readonly string[]) => `(${xs.map((x) => `'${x}'`).join(", ")})`;
    const rules: [string, string][] = [
      ["region", `r_name = ['AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'][r_regionkey + 1]`],
      ["nation", `n_nationkey BETWEEN 0 AND 24 AND n_regionkey BETWEEN 0 AND 4`],
      ["supplier", `s_name = printf('Supplier#%09d', s_suppkey) AND length(s_address) BETWEEN 10 AND 40`],
      [
        "supplier",
        `s_phone LIKE (s_nationkey + 10)::VARCHAR || '-___-___-____' AND s_acctbal BETWEEN -999.99 AND 9999.99`,
      ],
      ["supplier", `length(s_comment) BETWEEN 25 AND 100`],
      [
        "customer",
        `c_name = printf('Customer#%09d', c_custkey) AND c_phone LIKE (c_nationkey + 10)::VARCHAR || '-___-___-____'`,
      ],
      ["customer", `c_acctbal BETWEEN -999.99 AND 9999.99 AND round(c_acctbal, 2) = c_acctbal`],
      ["customer", `c_mktsegment IN ('AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD')`],
      ["customer", `length(c_comment) BETWEEN 29 AND 116`],
      ["part", `p_type IN ${inList(TYPES)} AND p_container IN ${inList(CONTAINERS)} AND p_size BETWEEN 1 AND 50`],
      ["part", `p_mfgr = 'Manufacturer#' || substr(p_brand, 7, 1) AND p_brand SIMILAR TO 'Brand#[1-5][1-5]'`],
      ["part", `p_retailprice = (90000 + (p_partkey // 10) % 20001 + 100 * (p_partkey % 1000)) / 100`],
      [
        "part",
        `len(list_distinct(string_split(p_name, ' '))) = 5 AND list_has_all(${`[${COLORS.map((c) => `'${c}'`).join(",")}]`}, string_split(p_name, ' '))`,
      ],
      [
        "partsupp",
        `ps_availqty BETWEEN 1 AND 9999 AND ps_supplycost BETWEEN 1 AND 1000 AND length(ps_comment) BETWEEN 49 AND 198`,
      ],
      ["orders", `o_orderdate BETWEEN DATE '1992-01-01' AND DATE '1998-12-31' - INTERVAL 151 DAY`],
      ["orders", `o_orderpriority IN ('1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW')`],
      [
        "orders",
        `o_clerk SIMILAR TO 'Clerk#0000000(0[1-9]|10)' AND o_shippriority = 0 AND length(o_comment) BETWEEN 19 AND 78`,
      ],
      ["lineitem", `l_quantity BETWEEN 1 AND 50 AND l_discount BETWEEN 0 AND 0.10 AND l_tax BETWEEN 0 AND 0.08`],
      ["lineitem", `l_shipinstruct IN ('DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN')`],
      [
        "lineitem",
        `l_shipmode IN ('REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB') AND length(l_comment) BETWEEN 10 AND 43`,
      ],
      ["lineitem", `l_returnflag = 'N' OR l_receiptdate <= DATE '1995-06-17'`],
      ["lineitem", `l_returnflag IN ('R', 'A') OR l_receiptdate > DATE '1995-06-17'`],
      ["lineitem", `l_linestatus = CASE WHEN l_shipdate > DATE '1995-06-17' THEN 'O' ELSE 'F' END`],
    ];
    for (const [table, rule] of rules) expect(await broken(table, rule), `${table}: ${rule}`).toBe(0);
  });

  it("derives line and order values by the specification's rules", async () => {
    const lineRules = [
      `l_shipdate BETWEEN o_orderdate + 1 AND o_orderdate + 121`,
      `l_commitdate BETWEEN o_orderdate + 30 AND o_orderdate + 90`,
      `l_receiptdate BETWEEN l_shipdate + 1 AND l_shipdate + 30`,
      `abs(l_extendedprice - l_quantity * p_retailprice) < 1e-6`,
    ];
    for (const rule of lineRules)
      expect(
        await one(
          `SELECT count(*) FROM lineitem JOIN orders ON l_orderkey = o_orderkey JOIN part ON l_partkey = p_partkey WHERE NOT (${rule})`,
        ),
        rule,
      ).toBe(0);
    // Status from the lines: F all shipped, O none, P some; total price from the lines, to the cent.
    const orderRules = await duck.rows(`
      WITH l AS (SELECT l_orderkey, bool_and(l_linestatus = 'F') f, bool_and(l_linestatus = 'O') o, count(*) n,
                        sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) price
                 FROM lineitem GROUP BY l_orderkey)
      SELECT count(*) FILTER (WHERE o_orderstatus <> CASE WHEN f THEN 'F' WHEN o THEN 'O' ELSE 'P' END),
             count(*) FILTER (WHERE abs(o_totalprice - price) > 0.005 * n + 1e-6),
             count(*) FILTER (WHERE round(o_totalprice, 2) <> o_totalprice),
             count(DISTINCT o_orderstatus)
      FROM orders JOIN l ON o_orderkey = l_orderkey`);
    expect(orderRules[0].map(Number)).toEqual([0, 0, 0, 3]);
    // The returned-flag draw, the ship date and the order dates spread over their ranges.
    expect(await one(`SELECT count(DISTINCT l_returnflag) FROM lineitem`)).toBe(3);
    expect(
      await one(`SELECT min(o_orderdate) < DATE '1992-02-01' AND max(o_orderdate) > DATE '1998-07-01' FROM orders`),
    ).toBe(true);
  });

  it("writes comment text in which Q13's and Q16's patterns occur at realistic rates", async () => {
    // Q13: orders whose comment matches '%special%requests%' are a small share (about 1%).
    const special = (await one(`SELECT count(*) FROM orders WHERE o_comment LIKE '%special%requests%'`)) as number;
    expect(special).toBeGreaterThan(15000 * 0.003);
    expect(special).toBeLessThan(15000 * 0.03);
    // Q16: SF × 5 suppliers (at least one) complain, as many recommend.
    expect(await one(`SELECT count(*) FROM supplier WHERE s_comment LIKE '%Customer%Complaints%'`)).toBe(1);
    expect(await one(`SELECT count(*) FROM supplier WHERE s_comment LIKE '%Customer%Recommends%'`)).toBe(1);
    // The grammar's words, not random letters.
    expect(
      await one(`SELECT count(*) FROM lineitem WHERE l_comment LIKE '%furiously%' OR l_comment LIKE '%carefully%'`),
    ).toBeGreaterThan(1000);
  });

  it("writes the same rows to CSV as to Parquet", async () => {
    for (const t of ["lineitem", "orders", "supplier"]) {
      const diff = await one(
        `SELECT count(*) FROM (SELECT * FROM ${t} EXCEPT ALL SELECT * FROM read_csv('${join(dir, t)}.csv', header = true, auto_type_candidates = ['BIGINT', 'DOUBLE', 'DATE', 'VARCHAR']))`,
      );
      expect(diff, t).toBe(0);
    }
  });
});

describe("TPC-H generator determinism", () => {
  it("writes byte-identical files on a second run and with worker threads, whatever their number", async () => {
    // SF 0.07: two chunks of orders and lineitem, so the worker run really spreads them.
    const root = mkdtempSync(join(tmpdir(), "basin-tpch-det-"));
    cleanup.push(root);
    const inline = join(root, "inline");
    const again = join(root, "again");
    await generateTpch({ sf: 0.07, out: inline, workers: 0 });
    await generateTpch({ sf: 0.07, out: again, workers: 0 });
    // Worker threads need the transpiled module beside the generator: bundle the CLI and
    // worker into the repository's (ignored) dist/, where the packages resolve.
    mkdirSync("dist", { recursive: true });
    const bundle = mkdtempSync(join("dist", "tpch-gen-test-"));
    cleanup.push(bundle);
    await build({
      entryPoints: ["bench/tpch/gen/main.ts", "bench/tpch/gen/worker.ts"],
      outdir: bundle,
      bundle: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "warning",
    });
    const threaded = join(root, "threaded");
    execFileSync(process.execPath, [join(bundle, "main.js"), "--sf", "0.07", "--out", threaded, "--workers", "2"], {
      stdio: "pipe",
    });
    for (const t of TPCH_TABLES) {
      const a = readFileSync(join(inline, `${t}.parquet`));
      expect(readFileSync(join(again, `${t}.parquet`)).equals(a), `${t}: second run`).toBe(true);
      expect(readFileSync(join(threaded, `${t}.parquet`)).equals(a), `${t}: 2 worker threads`).toBe(true);
    }
    const d = await Duck.open();
    try {
      const rows = await d.rows(
        `SELECT count(*), count(DISTINCT l_orderkey) FROM '${join(threaded, "lineitem.parquet")}'`,
      );
      expect(Number(rows[0][1])).toBe(105000);
    } finally {
      d.close();
    }
  });
});

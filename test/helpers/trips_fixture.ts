// The shared setup of the differential suites: generated trips (nulls, unicode, a
// key holding half the rows) as CSV files and as DuckDB table `t`, two Basin
// sources over them (CSV in small blocks; columns with empty and one-row
// partitions), 1- and 4-worker clusters, and the loop that checks each case.
import { afterAll, beforeAll, describe, it } from "vitest";
import { fromColumns, readCsv, type DataFrame } from "../../engine/api/index.js";
import { makeTrips, TRIPS_SQL_COLUMNS, writeTripsCsv, type Trips } from "./data.js";
import { Duck } from "./oracle.js";
import { expectOnBoth, twoClusters, type TwoClusters } from "./clusters.js";

export interface TripsFixture {
  data: Trips;
  dir: string;
  duck: Duck;
  clusters: TwoClusters;
  /** The same rows as two Basin sources, by description. */
  sources: Record<string, () => DataFrame>;
}

/** One differential case: a Basin pipeline over `t` and DuckDB's answer (SQL, or computed). */
export interface TripsCase {
  name: string;
  basin: (t: DataFrame) => DataFrame;
  sql: string | ((fx: TripsFixture) => Promise<unknown[][]>);
  ordered?: boolean;
}

/**
 * Registers beforeAll/afterAll hooks that fill and free the fixture; its fields are
 * ready inside tests. `partitions` sizes the in-memory source (default: empty,
 * one-row and small partitions around one big one).
 *
 * @example
 * const fx = tripsFixture({ rows: 3000, seed: 11 });
 * describeTripsCases(fx, cases);
 */
export function tripsFixture(options: { rows: number; seed: number; partitions?: number[] }): TripsFixture {
  const { rows, seed } = options;
  const partitions = options.partitions ?? [0, 1, rows - 4, 0, 1, 2, 0];
  const fx = { clusters: twoClusters() } as TripsFixture;
  fx.sources = {
    "readCsv, 3 files in ~2 KB blocks": () =>
      readCsv(`${fx.dir}/*.csv`, { blocksize: 2048, dtypes: { k: "int64", v: "int64" }, parseDates: ["day"] }),
    "fromColumns with empty and one-row partitions": () =>
      fromColumns(
        { ...fx.data, day: fx.data.day.map((d) => (d === null ? null : new Date(`${d}T00:00:00Z`))) },
        { partitions, types: { k: "int64", v: "int64", f: "float64", day: "date" } },
      ),
  };
  beforeAll(async () => {
    fx.data = makeTrips(rows, seed);
    fx.dir = writeTripsCsv(fx.data, 3);
    fx.duck = await Duck.open();
    await fx.duck.run(
      `CREATE TABLE t AS SELECT * FROM read_csv('${fx.dir}/*.csv', header=true, columns=${TRIPS_SQL_COLUMNS})`,
    );
  });
  afterAll(() => fx.duck.close());
  return fx;
}

/**
 * For each source, one test per case: Basin on 1 worker matches DuckDB, and 4 workers
 * give the same rows (bit for bit unless `exactAcrossWorkers` is false: float sums
 * may combine partial results in another order).
 */
export function describeTripsCases(
  fx: TripsFixture,
  cases: TripsCase[],
  options: { exactAcrossWorkers?: boolean } = {},
): void {
  describe.each(Object.keys(fx.sources))("%s", (source) => {
    it.each(cases)("$name matches DuckDB, with 1 and 4 workers alike", async (c) => {
      const frame = c.basin(fx.sources[source]());
      const expected = typeof c.sql === "string" ? await fx.duck.rows(c.sql) : await c.sql(fx);
      await expectOnBoth(fx.clusters, frame, expected, c.name, {
        ordered: c.ordered,
        exact: options.exactAcrossWorkers,
      });
    });
  });
}

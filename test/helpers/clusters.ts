// The 1- and 4-worker clusters every differential suite runs on, and the check
// that both agree with the oracle's rows.
import { afterAll, beforeAll, expect } from "vitest";
import { LocalCluster, type DataFrame } from "../../engine/api/index.js";
import { native } from "../../engine/native/addon.js";
import { collectResults } from "../../engine/run/take.js";
import { expectSameRows, tableRows } from "./oracle.js";

export interface TwoClusters {
  one: LocalCluster;
  four: LocalCluster;
}

/**
 * Registers hooks that start a 1- and a 4-worker cluster, close them after the
 * file's tests and check that the native store is empty then.
 *
 * @example
 * const clusters = twoClusters();
 * await expectOnBoth(clusters, df, await duck.rows(sql), "case");
 */
export function twoClusters(): TwoClusters {
  const c = {} as TwoClusters;
  beforeAll(() => {
    c.one = new LocalCluster({ workers: 1 });
    c.four = new LocalCluster({ workers: 4 });
  });
  afterAll(async () => {
    await c.one.close();
    await c.four.close();
    // Results' arrays may share stored buffers until JS collects them (as test/setup/store_empty.ts).
    await collectResults();
    expect(native().storeStats()).toMatchObject({ handles: 0, buffers: 0 });
  });
  return c;
}

/**
 * `frame` on 1 worker gives the `expected` rows, and 4 workers give the same rows
 * (bit for bit unless `exact` is false: float sums may combine in another order).
 */
export async function expectOnBoth(
  c: TwoClusters,
  frame: DataFrame,
  expected: unknown[][],
  label: string,
  options: { ordered?: boolean; exact?: boolean } = {},
): Promise<void> {
  const a = await frame.compute({ cluster: c.one });
  const b = await frame.compute({ cluster: c.four });
  expectSameRows(tableRows(a), expected, label, options.ordered);
  if (options.exact === false) expectSameRows(tableRows(b), tableRows(a), `${label}: 4 workers`, options.ordered);
  else expect(tableRows(b)).toEqual(tableRows(a));
  expect(b.schema).toEqual(a.schema);
}

// The TypeScript port of str.lower's table (engine/common/case_map.ts, used for the
// text of case-insensitive view filters and "Copy as code") against the engine's own
// str.lower, code point by code point.
import { afterAll, describe, expect, it } from "vitest";
import { col, fromColumns, LocalCluster } from "../../engine/api/index.js";
import { engineLower } from "../../engine/common/case_map.js";

const cluster = new LocalCluster({ workers: 1 });
afterAll(() => cluster.close());

describe("engineLower", () => {
  it("lowercases every code point of the first three planes' letters' blocks as the engine's str.lower does", async () => {
    const texts: string[] = [];
    for (let c = 0; c < 0x3000; c++) if (c < 0xd800 || c > 0xdfff) texts.push(String.fromCodePoint(c));
    texts.push("ẞ", "𝐀", "ÀÉÎ İstanbul ΣΑΣ Ǆ Ж", "");
    const t = await fromColumns({ s: texts }).select(col("s").str.lower().alias("l")).compute({ cluster });
    const engine = t.column("l") as string[];
    const mismatches = texts.flatMap((s, i) =>
      engineLower(s) === engine[i] ? [] : [`U+${s.codePointAt(0)?.toString(16)}`],
    );
    expect(mismatches).toEqual([]);
  });
});

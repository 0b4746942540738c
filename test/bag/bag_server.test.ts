// A pipeline whose default export is a Bag, run through the engine server (`basin
// serve`): the result is marked as a bag and pages as the items' JSON text.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page, ResultInfo } from "../../engine/common/rpc.js";
import { servedWorkspace } from "../helpers/served.js";

let dir: string;

const ITEMS = Array.from({ length: 300 }, (_, i) => ({
  id: i,
  city: ["Zürich", "東京", "naïve"][i % 3],
  tags: i % 4 === 0 ? [] : ["a", { b: i }],
}));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "basin-bag-server-"));
  writeFileSync(join(dir, "items.ndjson"), ITEMS.map((x) => JSON.stringify(x)).join("\n"));
  writeFileSync(
    join(dir, "bag.ts"),
    `import { bag } from "basin";\nexport default bag.readJson<{ id: number; city: string }>("${dir}/items.ndjson", { blocksize: 1000 }).filter((x) => x.id % 2 === 0);\n`,
  );
  writeFileSync(
    join(dir, "throws.ts"),
    `import { bag } from "basin";\nconst b = bag.fromItems([1, 2, 3]);\nexport default b.map(function boom(x: number) { if (x > 2) throw new Error("too big"); return x; });\n`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const served = servedWorkspace(() => dir);
const { runToEnd } = served;

describe("bag results in the engine server", () => {
  it("a bag default export is a result of kind bag whose item column pages as JSON", async () => {
    const e = await runToEnd("bag.ts");
    if (e.type !== "runFinished") throw new Error(JSON.stringify(e));
    const r: ResultInfo = e.result;
    expect(r.kind).toBe("bag");
    expect(r.schema).toEqual([{ name: "item", type: "string" }]);
    const expected = ITEMS.filter((x) => x.id % 2 === 0);
    expect(r.rows).toBe(expected.length);
    const page = await served.client.call<Page>("page", r.id, 0, 1000);
    expect(page.values[0].map((s) => JSON.parse(s as string))).toEqual(expected);
    // views keep the kind, so a filtered bag still shows as items
    const v = await served.client.call<ResultInfo>(
      "view",
      r.id,
      [],
      [{ column: "item", kind: "contains", text: "東京" }],
    );
    expect(v.kind).toBe("bag");
    expect(v.rows).toBe(expected.filter((x) => x.city === "東京").length);
    await served.client.call("release", v.id);
    await served.client.call("release", r.id);
  });

  it("a bag function that throws fails the run at its pipeline line", async () => {
    const e = await runToEnd("throws.ts");
    if (e.type !== "runFailed") throw new Error(JSON.stringify(e));
    expect(e.error.code).toBe("BASIN_FUNCTION");
    expect(e.error.location).toMatch(/throws\.ts:3:\d+$/);
    expect(e.error.message).toContain('map function "boom" threw Error: too big');
  });
});

// Issue 20's data-explorer timings, measured in chromium on a 1e7-row, 10-column
// result: the first page after the run ends, the summary's profiles of all 10 columns,
// and scrolling to rows anywhere in it. The page's own clock (performance.now) times
// what the user sees: a MutationObserver notes when the run's ✓ appears, when row 1's
// cells have values and when every summary card has its numbers. BENCHMARKS.md
// records the measurements; the test checks that each appears, not how fast.
import { availableParallelism, loadavg } from "node:os";
import type { Page } from "playwright-core";
import type { EngineService } from "../../engine/server/engine_service.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFile, openWorkbench, POLL, runStatus, type Workbench } from "../helpers/browser.js";

const ROWS = 10_000_000;
/** 1e4 × 1e3 rows through a join on a constant key: 1e7 rows made in the store, with nulls, strings, dates and bools. */
const BIG = `import { fromColumns, col } from "basin";

const A = 10_000, B = 1_000;
const a = fromColumns({
  i: Array.from({ length: A }, (_, i) => i),
  city: Array.from({ length: A }, (_, i) => (i % 13 === 0 ? null : ["Zürich", "NYC", "São Paulo", "Lagos", "Oslo"][i % 5])),
  day: Array.from({ length: A }, (_, i) => new Date(Date.UTC(2020, 0, 1 + (i % 1000)))),
  k: Array.from({ length: A }, () => 1),
}, { partitions: 4 });
const b = fromColumns({
  j: Array.from({ length: B }, (_, j) => j),
  flag: Array.from({ length: B }, (_, j) => j % 3 === 0),
  k: Array.from({ length: B }, () => 1),
});
export default a.join(b, { on: "k" }).select(
  col("i").mul(B).add(col("j")).alias("id"),
  col("i"),
  col("j"),
  col("i").mul(0.37).add(col("j").mul(0.011)).alias("fare"),
  col("j").mod(17).cast("float64").div(3).alias("tip"),
  col("city"),
  col("day"),
  col("flag"),
  col("i").mod(7).alias("zone"),
  col("j").sub(500).mul(col("i").mod(3)).alias("delta"),
);
`;

let w: Workbench;
let page: Page;

beforeAll(async () => {
  w = await openWorkbench({ "big.ts": BIG });
  page = w.page;
});

afterAll(async () => {
  await w?.close();
});

/** The result the page shows: the session's run's default export. */
async function viewOf(engine: EngineService): Promise<string> {
  const state = await engine.attach((await w.page.evaluate(() => sessionStorage.getItem("basin.session.v1"))) ?? "");
  return state.results[0].id;
}

interface Marks {
  end?: number;
  first?: number;
  profiled?: number;
  complete?: number;
}

/** Scrolls the grid so that `row` is at the top; resolves with the ms until its cells show values. */
function scrollTo(p: Page, row: number): Promise<number> {
  return p.evaluate(
    ([row, rows]) =>
      new Promise<number>((resolve, reject) => {
        const el = document.querySelector(".results-host .results-scroller") as HTMLElement;
        const virtual = rows * 24 + 66 + 24; // rows, the sticky header, the end padding (ResultsTable)
        // The grid's scale (renderer/common/virtual_scale.ts): its content is at most 8,000,000 px.
        const ratio = (virtual - el.clientHeight) / Math.max(1, Math.min(virtual, 8_000_000) - el.clientHeight);
        const t0 = performance.now();
        el.scrollTop = (66 + row * 24) / Math.max(1, ratio);
        const check = () => {
          const cell = document.querySelector(`.results-host [data-row="${row}"] .td[data-col="1"]`);
          if (cell && cell.textContent !== "" && !cell.querySelector(".loading-cell"))
            return resolve(performance.now() - t0);
          if (performance.now() - t0 > 10_000) return reject(new Error(`row ${row} never showed`));
          requestAnimationFrame(check);
        };
        check();
      }),
    [row, ROWS] as const,
  );
}

describe("data explorer timings on 1e7 rows", { timeout: 300_000 }, () => {
  it("shows the first page, every column's profile and rows anywhere in 1e7, and logs how long each took", async () => {
    await openFile(page, "big.ts");
    await page.evaluate(() => {
      const t: Marks = ((window as unknown as { __marks: Marks }).__marks = {});
      new MutationObserver(() => {
        const now = performance.now();
        if (
          t.end === undefined &&
          (document.querySelector('[data-testid="run-status"]')?.textContent ?? "").startsWith("✓")
        )
          t.end = now;
        if (t.end === undefined) return;
        const cell = document.querySelector('.results-host [data-row="0"] .td[data-col="1"]');
        if (t.first === undefined && cell && cell.textContent !== "" && !cell.querySelector(".loading-cell"))
          t.first = now;
        const cards = [...document.querySelectorAll("[data-summary-column]")];
        if (
          t.profiled === undefined &&
          cards.length === 10 &&
          cards.every((c) => c.getAttribute("data-state") !== "loading")
        )
          t.profiled = now;
        if (t.complete === undefined && document.querySelector('[data-testid="summary-complete"]')) t.complete = now;
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    await page.click('[data-testid="run"]');
    await expect.poll(() => runStatus(page), { timeout: 120_000 }).toMatch(/✓/);
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toBe("10,000,000 rows");
    const marks = async () => page.evaluate(() => (window as unknown as { __marks: Marks }).__marks);
    await expect.poll(async () => (await marks()).complete, { timeout: 120_000 }).toBeDefined();
    const m = await marks();
    const firstPage = m.first! - m.end!,
      profiles = m.profiled! - m.end!,
      complete = m.complete! - m.end!;
    const scrolls: number[] = [];
    for (const row of [
      9_999_990, 5_000_000, 1_234_567, 7_654_321, 42, 8_888_888, 3_333_333, 9_000_001, 250_000, 6_500_000,
    ])
      scrolls.push(await scrollTo(page, row));
    console.log(
      `explorer timings (1e7 rows, 10 columns): first page ${firstPage.toFixed(0)} ms after the run ended; ` +
        `profiles of 10 columns ${profiles.toFixed(0)} ms (with the distinct counts of many-valued numbers ${complete.toFixed(0)} ms); ` +
        `scroll to a row: ${scrolls.map((s) => s.toFixed(0)).join(", ")} ms (max ${Math.max(...scrolls).toFixed(0)})`,
    );
    // The same profiles straight from the engine, with the CPU time they take: on a machine
    // shared with other jobs, CPU seconds / 2 cores is what an idle machine would take.
    const engine = w.server.engine as EngineService;
    const view = await engine.view(await viewOf(engine), [], []);
    const cpu0 = process.cpuUsage(),
      t0 = performance.now();
    for (const f of view.schema) await engine.profile(view.id, f.name);
    const wall = performance.now() - t0,
      cpu = process.cpuUsage(cpu0);
    await engine.release(view.id);
    console.log(
      `engine profiles of 10 columns: ${wall.toFixed(0)} ms wall, ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms CPU ` +
        `(load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)`,
    );
    // The targets (300 ms, 2 s, 150 ms) are measured here and recorded in BENCHMARKS.md,
    // not asserted: wall times on a shared 2-core machine are not a test. What is tested
    // is that each thing the user waits for happens: the first page, every profile, the
    // distinct counts, each scrolled-to row (scrollTo fails after 10 s), and that the
    // profiles' work is bounded (the CPU they take, not the wall time).
    for (const mark of ["first", "profiled", "complete"] as const) expect(m[mark], mark).toBeGreaterThanOrEqual(m.end!);
    expect((cpu.user + cpu.system) / 1000).toBeLessThan(2 * 2000);
  });
});

// What a user's probe of the workbench found (session 23), each proved fixed in
// Chromium against a real `serve()`: a run that ends while the page is busy still
// shows its result; the summary's statistics of small values keep their digits;
// histograms of dates and timestamps sit on a time axis; Escape closes "copy as
// code"; Node's timers and process.exit are no TypeScript errors; a lost connection
// to the engine is said, and the run the page followed is given up.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { openFile, runStatus, runToEnd, screenshots, type Workbench, openWorkbench } from "../helpers/browser.js";

const POLL = { timeout: 30_000 };

const SHORT = `import { fromColumns } from "basin";
export default fromColumns({ answer: [42, 43, 44] });
`;
const TINY = `import { fromColumns } from "basin";
const n = Array.from({ length: 100 }, (_, i) => i);
export default fromColumns({ p: n.map((i) => 1e-4 + (i % 10) * 1e-5), q: n.map((i) => 0.9995 + (i % 3) * 1e-6) });
`;
const DATES = `import { fromColumns, col } from "basin";
const n = Array.from({ length: 365 }, (_, i) => i);
export default fromColumns({ ts: n.map((i) => new Date(Date.UTC(2024, 0, 1 + i, i % 24))), v: n })
  .withColumns({ day: col("ts").cast("date") });
`;
const NODE_GLOBALS = `import { fromColumns } from "basin";
const t = setTimeout(() => undefined, 10);
clearTimeout(t);
console.log("env", process.env.HOME, process.cwd());
if (process.env.NEVER_SET_HERE === "1") process.exit(2);
const mistake: number = "not a number";
export default fromColumns({ ok: [1] });
`;

let w: Workbench;
let page: Page;

beforeAll(async () => {
  w = await openWorkbench({
    "short.ts": SHORT,
    "tiny.ts": TINY,
    "dates.ts": DATES,
    "globals.ts": NODE_GLOBALS,
    "loop.ts": `import { fromColumns } from "basin";\nwhile (true) {}\nexport default fromColumns({ a: [1] });\n`,
  });
  page = w.page;
});

afterAll(async () => {
  await w?.close();
});

const statText = (column: string, stat: string) =>
  page.locator(`[data-summary-column="${column}"] [data-stat="${stat}"] dd`).textContent();

describe("the workbench under a user's probe", { timeout: 180_000 }, () => {
  it("a short run whose events come faster than the page renders shows its result, and the next run starts", async () => {
    // The page hears runStarted, the run's id and runFinished in one go, as a page busy
    // rendering (a long summary of a wide result) does: no render comes between them.
    const p = await w.browser.newPage();
    try {
      await p.addInitScript(() => {
        const Native = window.WebSocket;
        window.WebSocket = class extends Native {
          set onmessage(handler: ((ev: MessageEvent) => void) | null) {
            const held: MessageEvent[] = [];
            super.onmessage = (ev: MessageEvent) => {
              const text = String(ev.data);
              if (held.length === 0 && !text.includes('"runStarted"')) return handler?.(ev);
              held.push(ev);
              if (text.includes('"runFinished"') || text.includes('"runFailed"'))
                for (const e of held.splice(0)) handler?.(e);
            };
          }
        } as typeof WebSocket;
      });
      await p.goto(w.server.url);
      await openFile(p, "short.ts");
      await p.click('[data-testid="run"]');
      await expect.poll(() => runStatus(p), POLL).toMatch(/✓/);
      await expect.poll(() => p.textContent('[data-testid="row-count"]'), POLL).toMatch(/\b3\b/);
      await runToEnd(p);
    } finally {
      await p.close();
    }
  });

  it("the summary shows small values' mean, median and std to 6 significant digits, not 0 or 1", async () => {
    await openFile(page, "tiny.ts");
    await runToEnd(page);
    await page.waitForSelector('[data-testid="summary"]');
    await expect.poll(() => page.locator('[data-testid="summary-complete"]').count(), POLL).toBe(1);
    expect(await statText("p", "mean")).toBe("0.000145");
    expect(await statText("p", "median")).toBe("0.000145");
    // p is 1e-4 + k·1e-5 for k = 0…9, ten rows each: its sample std is 1e-5 · √(8.25 · 100 / 99).
    expect(await statText("p", "std")).toBe(String(Number((1e-5 * Math.sqrt((8.25 * 100) / 99)).toPrecision(6))));
    expect(await statText("q", "mean")).toBe("0.999501");
    expect(await statText("q", "std")).not.toBe("0");
  });

  it("histograms of a timestamp and a date column lie on a time axis in 2024, with no page error", async () => {
    await openFile(page, "dates.ts");
    await runToEnd(page);
    await page.click('[data-panel="plot"]');
    await page.selectOption('[aria-label="plot kind"]', "histogram");
    for (const column of ["ts", "day"]) {
      await page.selectOption('[aria-label="y column"]', column);
      await expect.poll(() => page.textContent('[data-testid="plot-note"]'), POLL).toContain(`histogram of ${column}`);
      const axis = await page.$eval(".plot-host", (el) => {
        const plot = (el as HTMLElement & { plot: { scales: { x: { min: number; max: number } } } }).plot;
        return [plot.scales.x.min, plot.scales.x.max];
      });
      expect(axis[0], column).toBeGreaterThanOrEqual(Date.UTC(2023, 11, 1) / 1000);
      expect(axis[1], column).toBeLessThanOrEqual(Date.UTC(2025, 1, 1) / 1000);
      // uPlot draws its ticks on the canvas; the x axis keeps the labels it drew.
      const labels = await page.$eval(".plot-host", (el) =>
        ((el as HTMLElement & { plot: { axes: { _values?: string[] }[] } }).plot.axes[0]._values ?? []).join(" "),
      );
      expect(labels, column).toMatch(/2024-\d\d/);
      expect(labels, column).not.toMatch(/1970/);
    }
    await screenshots(page, "probe-date-histogram");
    expect(w.pageErrors).toEqual([]);
  });

  it("Escape closes the copy-as-code box", async () => {
    await page.click('[data-panel="results"]');
    await page.click('[data-testid="copy-code"]');
    await page.waitForSelector('[data-testid="view-code"]');
    await page.keyboard.press("Escape");
    await expect.poll(() => page.locator('[data-testid="view-code"]').count(), POLL).toBe(0);
  });

  it("Node's timers, console and process.exit in a pipeline are not TypeScript errors", async () => {
    await openFile(page, "globals.ts");
    await page.click('[data-panel="problems"]');
    // Once the checker has run, the file's one deliberate type error is its only problem.
    const problems = () => page.locator('[data-testid="problems"] .problem').allTextContents();
    await expect.poll(problems, POLL).toHaveLength(1);
    expect((await problems())[0]).toMatch(/not assignable to type 'number'.*TypeScript 2322.*globals\.ts:6/);
    expect(w.pageErrors).toEqual([]);
  });

  it("a lost connection is said in Output, and the run the page followed is given up", async () => {
    await openFile(page, "loop.ts");
    await page.click('[data-testid="run"]');
    await expect.poll(() => runStatus(page), POLL).toMatch(/running/);
    await w.server.close(); // basin serve stops (the cluster lives on for close())
    await expect.poll(() => runStatus(page), { timeout: 15_000 }).toMatch(/✕ failed/);
    await page.click('[data-panel="output"]');
    await expect
      .poll(() => page.textContent('[data-testid="output"]'), { timeout: 15_000 })
      .toContain("lost the connection to the engine");
  });
});

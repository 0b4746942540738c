// The data explorer end to end (issue 20): the summary panel's numbers against an
// independent computation over the same rows, column names readable at both sizes,
// the summary following the table's filters, "copy as code" whose lines, run as a
// pipeline, give the rows the table shows, and a 1e6-row scatter binned on the
// workers showing every row's extent. Screenshots go to test-artifacts/explorer-*.png.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import {
  ARTIFACTS,
  openFile,
  openWorkbench,
  POLL,
  LARGE,
  SMALL,
  runToEnd,
  screenshots,
  setPanelHeight,
  writeWorkspaceFile,
  type Workbench,
} from "../helpers/browser.js";

const ROWS = 500;
const CITIES = ["Zürich", "NYC", "São Paulo", "nyc east", "Lagos"];
/** The table's columns, as the oracle sees them. */
const DATA = {
  trips: Array.from({ length: ROWS }, (_, i) => i),
  fare: Array.from({ length: ROWS }, (_, i) => (i % 7 === 0 ? null : ((i * 37) % 101) / 4 + 2.5)),
  city: Array.from({ length: ROWS }, (_, i) => (i % 11 === 0 ? null : CITIES[(i * i) % 5])),
  paid: Array.from({ length: ROWS }, (_, i) => i % 3 !== 0),
};
const LONG = "pickup_location_borough_and_zone_name_as_reported";
const TABLE = `import { fromColumns, col } from "basin";

const n = Array.from({ length: ${ROWS} }, (_, i) => i);
export default fromColumns({
  trips: n,
  fare: n.map((i) => (i % 7 === 0 ? null : ((i * 37) % 101) / 4 + 2.5)),
  city: n.map((i) => (i % 11 === 0 ? null : ${JSON.stringify(CITIES)}[(i * i) % 5])),
  paid: n.map((i) => i % 3 !== 0),
  ${LONG}: n.map((i) => i * 2),
}, { partitions: 3 });
`;

const SCATTER_N = 1_000_000;
/** 1e6 rows whose extremes sit in single rows far from the rest: a sample would miss them. */
const SCATTER = `import { fromColumns, col, lit } from "basin";

const a = fromColumns({ i: Array.from({ length: 1000 }, (_, i) => i), k: Array.from({ length: 1000 }, () => 1) });
const b = fromColumns({ j: Array.from({ length: 1000 }, (_, j) => j), k: Array.from({ length: 1000 }, () => 1) });
const id = col("i").mul(1000).add(col("j"));
export default a.join(b, { on: "k" }).select(
  id.alias("id"),
  col("i").cast("float64").add(col("j").mod(10).div(10)).alias("x"),
  col("j").cast("float64").sub(col("i").mod(50)).alias("y"),
).withColumns({
  x: col("id").eq(123456).cast("float64").mul(5000).add(col("x")),
  y: col("id").eq(654321).cast("float64").mul(-9000).add(col("y")),
});
`;

let w: Workbench;
let page: Page;

beforeAll(async () => {
  w = await openWorkbench({ "table.ts": TABLE, "scatter.ts": SCATTER });
  page = w.page;
});

afterAll(async () => {
  await w?.close();
});

const card = (column: string) => page.locator(`[data-summary-column="${column}"]`);
const statText = (column: string, stat: string) => card(column).locator(`[data-stat="${stat}"] dd`).textContent();
/** A statistic as the summary writes it: 6 significant digits (these are all within 1e-4 … 1e6). */
const fmt = (v: number) => v.toLocaleString("en-US", { maximumSignificantDigits: 6 });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

describe("data explorer", { timeout: 180_000 }, () => {
  it("the summary shows every column's type, missing, distinct, min/max/mean/median/std and histogram or top values", async () => {
    await openFile(page, "table.ts");
    await runToEnd(page);
    await page.waitForSelector('[data-testid="summary"]');
    await expect.poll(() => page.locator('[data-testid="summary-complete"]').count(), POLL).toBe(1);
    const fares = DATA.fare.filter((v): v is number => v !== null);
    const mean = fares.reduce((a, b) => a + b, 0) / fares.length;
    const std = Math.sqrt(fares.reduce((a, b) => a + (b - mean) ** 2, 0) / (fares.length - 1));
    const nulls = ROWS - fares.length;
    expect(await statText("fare", "missing")).toBe(`${nulls} (${((100 * nulls) / ROWS).toFixed(1)}%)`);
    expect(await statText("fare", "distinct")).toBe(new Set(fares).size.toLocaleString("en-US"));
    expect(await statText("fare", "min")).toBe(fmt(Math.min(...fares)));
    expect(await statText("fare", "max")).toBe(fmt(Math.max(...fares)));
    expect(await statText("fare", "mean")).toBe(fmt(mean));
    expect(await statText("fare", "median")).toBe(fmt(median(fares)));
    expect(await statText("fare", "std")).toBe(fmt(std));
    expect(await card("fare").locator(".summary-type").textContent()).toBe("float64");
    // The histogram's bars hold every non-null value.
    const inBars = await card("fare")
      .locator('[data-testid="summary-histogram"] title')
      .evaluateAll((ts) =>
        ts.reduce((n, t) => n + Number(/: ([\d,]+) rows/.exec(t.textContent ?? "")![1].replace(/,/g, "")), 0),
      );
    expect(inBars).toBe(fares.length);
    // Strings: the most frequent first, with their share of the non-null values.
    const cities = DATA.city.filter((c): c is string => c !== null);
    const counts = [...new Set(cities)].map((c) => [c, cities.filter((x) => x === c).length] as const);
    counts.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const top = await card("city").locator(".summary-top-value").allTextContents();
    expect(top).toEqual(counts.map((c) => c[0]).slice(0, 5));
    expect(await statText("city", "distinct")).toBe(String(counts.length));
    expect(await statText("paid", "distinct")).toBe("2");
    expect(await card("paid").locator(".summary-type").textContent()).toBe("bool");
    expect(w.pageErrors).toEqual([]);
  });

  it("column names are readable in full in the summary at both sizes, and a click shows the column in the table", async () => {
    for (const size of [LARGE, SMALL]) {
      await page.setViewportSize(size);
      const names = await page.$$eval(".summary-name", (els) =>
        els.map((e) => ({
          text: e.textContent,
          clipped: e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1,
        })),
      );
      expect(names.map((n) => n.text)).toEqual(["trips", "fare", "city", "paid", LONG]);
      expect(names.filter((n) => n.clipped)).toEqual([]);
    }
    await page.setViewportSize(LARGE);
    await setPanelHeight(page, 560);
    await page.waitForSelector('[data-testid="summary-complete"]');
    await card(LONG).locator(".summary-name").click();
    await expect.poll(() => page.textContent(".results-status"), POLL).toContain(`row 1 · ${LONG}`);
    await screenshots(page, "explorer-summary");
  });

  it("the summary follows the table's filters; copy as code gives lines that make the same rows", async () => {
    const filter = async (column: string, text: string) => {
      const box = page.getByLabel(`filter ${column}`);
      await box.fill(text);
      await box.press("Enter");
    };
    await filter("fare", "> 10");
    await filter("city", "nyc");
    await page.click('[data-th-sort="trips"]');
    await page.click('[data-th-sort="trips"]'); // descending
    const kept = DATA.trips.filter(
      (i) => DATA.fare[i] !== null && DATA.fare[i]! > 10 && (DATA.city[i] ?? "").toLowerCase().includes("nyc"),
    );
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toBe(`${kept.length} rows of ${ROWS}`);
    await expect.poll(() => page.textContent(".summary-title"), POLL).toContain(`${kept.length} rows`);
    await expect.poll(() => statText("trips", "max"), POLL).toBe(String(Math.max(...kept)));
    await page.click('[data-testid="copy-code"]');
    const code = await page.textContent('[data-testid="view-code"]');
    expect(code).toBe(
      [
        '  .filter(col("fare").gt(10))',
        '  .filter(col("city").str.lower().str.contains("nyc", { literal: true }))',
        '  .sort("trips", { descending: true })',
      ].join("\n"),
    );
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(code);
    await screenshots(page, "explorer-copy-as-code");
    await page.click('[data-testid="copy-code"]');
    // The lines, chained after the frame in a pipeline, give the rows the table shows.
    const pipeline = TABLE.replace(/\}, \{ partitions: 3 \}\);\n$/, `}, { partitions: 3 })\n${code};\n`);
    writeWorkspaceFile(w, "view.ts", pipeline);
    await page.reload();
    await page.waitForSelector('[data-path="view.ts"]');
    await openFile(page, "view.ts");
    await runToEnd(page);
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toBe(`${kept.length} rows`);
    // The rows shown (once their block is in) are the view's first rows, in its order.
    const want = [...kept].sort((a, b) => b - a).map(String);
    const shownIds = () =>
      page.$$eval('.results-host [data-row] .td[data-col="0"]', (els) => els.map((e) => e.textContent ?? ""));
    await expect.poll(async () => (await shownIds()).every((t) => t !== ""), POLL).toBe(true);
    const ids = await shownIds();
    expect(ids.length).toBeGreaterThan(5);
    expect(ids).toEqual(want.slice(0, ids.length));
  });

  it("a 1e6-row scatter is binned on the workers: every row counted, the axes span all of them, the note says so", async () => {
    await openFile(page, "scatter.ts");
    await runToEnd(page);
    await page.click('[data-panel="plot"]');
    await page.selectOption('[aria-label="plot kind"]', "scatter");
    await page.selectOption('[aria-label="x column"]', "x");
    await page.selectOption('[aria-label="y column"]', "y");
    await expect
      .poll(() => page.textContent('[data-testid="plot-note"]'), POLL)
      .toMatch(
        new RegExp(
          `^scatter of y by x: all ${SCATTER_N.toLocaleString("en-US")} rows, binned on the workers into \\d+ × \\d+ cells`,
        ),
      );
    type Host = HTMLElement & {
      bins: { counts: number[]; counted: number; total: number; xExtent: number[]; yExtent: number[] };
      plot: { scales: { x: { min: number; max: number }; y: { min: number; max: number } } };
    };
    const shown = await page.$eval(".plot-host", (el) => {
      const h = el as Host;
      return {
        sum: h.bins.counts.reduce((a, b) => a + b, 0),
        total: h.bins.total,
        x: [h.plot.scales.x.min, h.plot.scales.x.max],
        y: [h.plot.scales.y.min, h.plot.scales.y.max],
        xExtent: h.bins.xExtent,
        yExtent: h.bins.yExtent,
      };
    });
    expect(shown.sum).toBe(SCATTER_N);
    expect(shown.total).toBe(SCATTER_N);
    // The two outlying rows (one each) set the extent: x up to 5000 + i, y down to -9000 + j - i mod 50.
    const id = (n: number) => [Math.floor(n / 1000), n % 1000] as const;
    const [oi, oj] = id(123456),
      [pi, pj] = id(654321);
    const xMax = 5000 + oi + (oj % 10) / 10,
      yMin = -9000 + pj - (pi % 50);
    expect(shown.xExtent).toEqual([0, xMax]);
    expect(shown.yExtent).toEqual([yMin, 999]);
    expect(shown.x[0]).toBeLessThanOrEqual(0);
    expect(shown.x[1]).toBeGreaterThanOrEqual(xMax);
    expect(shown.y[0]).toBeLessThanOrEqual(yMin);
    expect(shown.y[1]).toBeGreaterThanOrEqual(999);
    // Hovering names the cell under the cursor and its row count.
    const box = (await page.locator(".plot-host .u-over").boundingBox())!;
    await page.mouse.move(box.x + 5, box.y + box.height / 2);
    await expect
      .poll(() => page.textContent('[data-testid="bin-readout"]'), POLL)
      .toMatch(/^x .* – .*, y .* – .*: [\d,]+ rows?$/);
    await screenshots(page, "explorer-binned-scatter");
  });

  it("at 1100×700 the binned scatter's note is whole and the y axis title keeps clear of the tick labels", async () => {
    // The chart as drawn at the large size: its plot area and its cells (re-binned per size on the workers).
    const drawn = () =>
      page.$eval(".plot-host", (el) => ({
        width: Math.round(el.querySelector(".u-over")!.getBoundingClientRect().width),
        cells: (el as HTMLElement & { bins: { counts: number[] } }).bins.counts.length,
      }));
    const large = await drawn();
    await page.setViewportSize(SMALL);
    try {
      // The note shows all its text: nothing cut off with "…".
      await expect
        .poll(
          () =>
            page.$eval('[data-testid="plot-note"]', (el) => ({
              text: el.textContent,
              cut: el.scrollWidth > el.clientWidth || el.scrollHeight > el.clientHeight,
            })),
          POLL,
        )
        .toEqual({ text: expect.stringMatching(/drag to zoom\)$/), cut: false });
      // The y axis, left of the plot and its ticks, holds the title's ink and then the tick labels' ink:
      // columns of the chart's canvas with ink; at least 4 px of blank between the title and the nearest label.
      const blankAfterTitle = () =>
        page.$eval(".plot-host", (el) => {
          const u = (
            el as HTMLElement & { plot: { width: number; bbox: { left: number; top: number; height: number } } }
          ).plot;
          const canvas = el.querySelector("canvas")!;
          const ratio = canvas.width / u.width;
          const ctx = canvas.getContext("2d")!;
          const right = Math.floor(u.bbox.left - 10 * ratio); // left of the 10 px tick marks
          const rows = Math.round(u.bbox.height);
          const px = ctx.getImageData(0, Math.round(u.bbox.top), right, rows).data;
          const ink = Array.from({ length: right }, (_, x) => {
            for (let y = 0; y < rows; y++) if (px[(y * right + x) * 4 + 3] > 40) return true;
            return false;
          });
          const titleEnd = ink.indexOf(false, ink.indexOf(true));
          const labelsStart = ink.indexOf(true, titleEnd);
          return ink.indexOf(true) < 0 || labelsStart < 0 ? -1 : (labelsStart - titleEnd) / ratio;
        });
      await expect.poll(blankAfterTitle, POLL).toBeGreaterThanOrEqual(4);
      await page.screenshot({ path: join(ARTIFACTS, "explorer-binned-scatter-note-1100x700.png") });
    } finally {
      await page.setViewportSize(LARGE);
      // The next test drags on the chart: wait until it is drawn at the large size again.
      await expect.poll(drawn, POLL).toEqual(large);
    }
  });

  it("zooming a binned scatter counts the rows in the selected ranges anew on the workers; a double-click shows all again", async () => {
    const over = (await page.locator(".plot-host .u-over").boundingBox())!;
    await page.mouse.move(over.x + over.width * 0.02, over.y + over.height * 0.05);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.1, over.y + over.height * 0.5, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => page.textContent('[data-testid="plot-note"]'), POLL).toMatch(/rows in this view/);
    const zoomed = await page.$eval(".plot-host", (el) => {
      const b = (
        el as HTMLElement & { bins: { view: { x: number[]; y: number[] }; counts: number[]; counted: number } }
      ).bins;
      return { view: b.view, sum: b.counts.reduce((a, c) => a + c, 0), counted: b.counted };
    });
    // The oracle: the pipeline's rows, made here, inside the view.
    let inside = 0;
    for (let i = 0; i < 1000; i++)
      for (let j = 0; j < 1000; j++) {
        const id = i * 1000 + j;
        const x = (id === 123456 ? 5000 : 0) + (i + (j % 10) / 10);
        const y = (id === 654321 ? -9000 : 0) + (j - (i % 50));
        if (x >= zoomed.view.x[0] && x <= zoomed.view.x[1] && y >= zoomed.view.y[0] && y <= zoomed.view.y[1]) inside++;
      }
    expect(inside).toBeGreaterThan(0);
    expect(zoomed.counted).toBe(inside);
    expect(zoomed.sum).toBe(inside);
    expect(await page.textContent('[data-testid="plot-note"]')).toContain(
      `${inside.toLocaleString("en-US")} of ${SCATTER_N.toLocaleString("en-US")} rows in this view`,
    );
    await page.dblclick(".plot-host .u-over");
    await expect
      .poll(() => page.textContent('[data-testid="plot-note"]'), POLL)
      .toContain(`all ${SCATTER_N.toLocaleString("en-US")} rows`);
    await page.click('[data-panel="results"]');
  });

  it("the summary can be hidden, and stays hidden after a reload", async () => {
    await page.click('[data-testid="summary-toggle"]');
    expect(await page.locator('[data-testid="summary"]').count()).toBe(0);
    await page.reload();
    await page.waitForSelector('[data-testid="results"]');
    expect(await page.locator('[data-testid="summary"]').count()).toBe(0);
    await page.click('[data-testid="summary-toggle"]');
    await page.waitForSelector('[data-testid="summary"]');
  });
});

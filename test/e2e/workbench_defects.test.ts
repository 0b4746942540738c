// Issue 20's workbench defects, each proved fixed end to end: a real `serve()` on
// 127.0.0.1 (one engine for the file) and Debian's chromium (one browser) driven
// by playwright-core, at 1600×1000 and 1100×700. Screenshots of each screen at both
// sizes go to test-artifacts/defects-*.png.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchChromium } from "../helpers/browser.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import type { EngineService } from "../../engine/server/engine_service.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";

const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
const POLL = { timeout: 30_000 };
const LARGE = { width: 1600, height: 1000 };
const SMALL = { width: 1100, height: 700 };
/** How long a session outlives its page here (a reload reattaches well within it). */
const GRACE_MS = 4000;

const ROWS = 400;
const TABLE = `import { fromColumns } from "basin";

const n = Array.from({ length: ${ROWS} }, (_, i) => i);
export default fromColumns({
  trips: n,
  tip_std: n.map((i) => (i % 5 === 0 ? null : i / 7)),
  city: n.map((i) => ["Zürich", "NYC", "São Paulo", "nyc east"][i % 4]),
  fare: n.map((i) => (i % 9 === 0 ? null : (i % 20) + 44.5)),
  a_column_name_far_too_long_to_show_whole_in_any_table: n,
});
`;
/** The table's rows, as the oracle for its filters. */
const TABLE_ROWS = Array.from({ length: ROWS }, (_, i) => ({
  city: ["Zürich", "NYC", "São Paulo", "nyc east"][i % 4],
  fare: i % 9 === 0 ? null : (i % 20) + 44.5,
  tip_std: i % 5 === 0 ? null : i / 7,
}));

const PLOT_N = 50_000;
const PLOTS = `import { fromColumns, show } from "basin";

// x descends: the first rows hold only the largest x.
const x = Array.from({ length: ${PLOT_N} }, (_, i) => ${PLOT_N} - 1 - i);
export default fromColumns({ x, y: x.map((v) => v * 1000 + (v % 7)) }, { partitions: 4 });
show(fromColumns({ city: ["Zürich", "NYC", "Lagos"], trips: [5, 9, 2] }), "by city");
show(fromColumns({ name: ["a", "b"], nothing: [null, null] }, { types: { nothing: "float64" } }), "all null");
show(fromColumns({ s: ["a", "b"] }), "words");
`;

const TYPO = `import { fromColumns, col } from "basin";

const t = fromColumns({ x: [1, 2, 3] });
export default t
  .groupBy("x")
  .agg(col("x").meadian());
`;

const SLOW = `import { fromColumns } from "basin";

const t0 = Date.now();
while (Date.now() - t0 < 2500) {}
export default fromColumns({ done: [1, 2, 3] });
`;

let dir: string;
let server: RunningServer;
let cluster: LocalCluster;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

async function newPage(ctx: BrowserContext): Promise<Page> {
  const p = await ctx.newPage();
  p.setDefaultTimeout(30_000);
  p.on("pageerror", (e) => pageErrors.push(e.message));
  return p;
}

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/renderer/index.html")))
    execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "basin-defects-"));
  writeFileSync(join(dir, "table.ts"), TABLE);
  writeFileSync(join(dir, "plots.ts"), PLOTS);
  writeFileSync(join(dir, "typo.ts"), TYPO);
  writeFileSync(join(dir, "slow.ts"), SLOW);
  writeFileSync(join(dir, "bad.csv"), "x,y,s\n1,2,a\n3,4,b\n5,x6,c\n");
  writeFileSync(
    join(dir, "cast.ts"),
    `import { readCsv, col } from "basin";\n\nconst t = readCsv(${JSON.stringify(join(dir, "bad.csv"))});\nexport default t\n  .filter(col("y").cast("int64", { strict: true }).gt(1));\n`,
  );
  writeFileSync(
    join(dir, "trips.csv"),
    "city,fare\n" + Array.from({ length: 30 }, (_, i) => `${["Zürich", "NYC"][i % 2]},${i + 0.5}`).join("\n") + "\n",
  );
  cluster = new LocalCluster({ workers: 2 });
  server = await serve({ root: dir, cluster, assets: join(ROOT, "dist/renderer"), sessionGraceMs: GRACE_MS });
  browser = await launchChromium();
  context = await browser.newContext({
    viewport: LARGE,
    permissions: ["clipboard-read", "clipboard-write"],
    acceptDownloads: true,
  });
  page = await newPage(context);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await cluster?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The screen as it is, at 1600×1000 and at 1100×700. */
async function shots(name: string, p: Page = page): Promise<void> {
  await p.setViewportSize(LARGE);
  await p.waitForTimeout(150);
  await p.screenshot({ path: join(ARTIFACTS, `defects-${name}-1600x1000.png`) });
  await p.setViewportSize(SMALL);
  await p.waitForTimeout(250);
  await p.screenshot({ path: join(ARTIFACTS, `defects-${name}-1100x700.png`) });
  await p.setViewportSize(LARGE);
  await p.waitForTimeout(150);
}

const status = (p: Page = page) => p.textContent('[data-testid="run-status"]');
const rowCount = (p: Page = page) => p.textContent('[data-testid="row-count"]');
const cellText = (row: number, col: number, p: Page = page) =>
  p
    .locator(`.results-host [data-row="${row}"] .td`)
    .nth(col + 1)
    .textContent();

async function openFile(path: string, p: Page = page): Promise<void> {
  await p.click(`[data-path="${path}"]`);
  await p.waitForSelector(`[data-tab="${path}"].active`);
  if (path.endsWith(".ts")) {
    await p.waitForFunction(() => (document.querySelector(".view-lines")?.textContent ?? "").includes("basin"));
    await p.click(".monaco-editor .view-lines");
  }
}

async function runToEnd(pattern: RegExp, p: Page = page): Promise<void> {
  await p.click('[data-testid="run"]');
  await expect.poll(() => status(p), { timeout: 60_000 }).toMatch(pattern);
}

async function storeStats(): Promise<{ tables: number; bytes: number }> {
  return (await (server.engine as EngineService).cluster()).store;
}

describe("issue 20: the workbench's defects", { timeout: 180_000 }, () => {
  it("1. the Output tab never blanks the app: Ctrl+Enter, another tab and a reload all keep it", async () => {
    await page.goto(server.url);
    await openFile("table.ts");
    await page.click('[data-panel="output"]');
    await page.waitForSelector('[data-testid="output"]');
    await page.keyboard.press("Control+Enter");
    await expect.poll(() => status(), POLL).toMatch(/✓/);
    await page.click('[data-panel="output"]');
    await page.click('[data-panel="problems"]');
    await page.click('[data-panel="output"]');
    expect(await page.locator('[data-testid="run"]').count()).toBe(1);
    // The open tab is saved: a reload lands on Output again, and the app is there.
    await page.reload();
    await page.waitForSelector('[data-testid="output"]');
    await page.click('[data-panel="results"]');
    await page.waitForSelector('[data-testid="run"]');
    expect(pageErrors.filter((m) => /destroy|not a function/.test(m))).toEqual([]);
  });

  it("1. a panel that fails shows its error in place; the rest of the app goes on working", async () => {
    const p = await newPage(context);
    try {
      // Make the Output panel's effect throw, as a browser quirk would.
      await p.addInitScript(() => {
        Element.prototype.scrollIntoView = () => {
          throw new Error("scrollIntoView broke");
        };
      });
      await p.goto(server.url);
      await p.waitForSelector('[data-path="table.ts"]');
      await p.click('[data-panel="output"]');
      await p.waitForSelector('[data-panel-error="The output panel"]');
      expect(await p.textContent('[data-testid="panel-error"]')).toContain("scrollIntoView broke");
      // The explorer, the editor and the other tabs still work.
      await p.click('[data-panel="cluster"]');
      await p.waitForSelector('[data-testid="cluster"]');
      await openFile("table.ts", p);
      expect(await p.locator('[data-testid="run"]').isEnabled()).toBe(true);
    } finally {
      await p.close();
    }
  });

  it("2. column names are readable at the default width, with the null badge whole", async () => {
    await page.click('[data-tab="table.ts"]');
    await page.click('[data-panel="results"]');
    await expect.poll(() => rowCount(), POLL).toContain(`${ROWS} rows`);
    await expect.poll(() => page.locator('.results-host [data-testid="profile"]').count(), POLL).toBe(5);
    for (const size of [LARGE, SMALL]) {
      await page.setViewportSize(size);
      const heads = await page.$$eval(".results-host .th-title", (els) =>
        els.map((th) => {
          const name = th.querySelector(".th-name") as HTMLElement;
          const badge = th.querySelector(".profile") as HTMLElement;
          const box = th.getBoundingClientRect();
          return {
            name: name.textContent,
            clipped: name.scrollWidth > name.clientWidth + 1,
            title: th.getAttribute("title") ?? "",
            badgeInside: badge.getBoundingClientRect().right <= box.right + 0.5,
            width: box.width,
          };
        }),
      );
      for (const h of heads) {
        expect(h.badgeInside, `${h.name}'s badge`).toBe(true);
        expect(h.title, `${h.name}'s tooltip`).toContain(h.name);
        // Short names whole; a very long one may be cut, with the tooltip saying it all.
        if (h.name!.length <= 20) expect(h.clipped, `${h.name} is cut`).toBe(false);
      }
      expect(heads.map((h) => h.name)).toEqual([
        "trips",
        "tip_std",
        "city",
        "fare",
        expect.stringMatching(/^a_column/),
      ]);
    }
    await page.setViewportSize(LARGE);
    await shots("results");
  });

  it("7. filters: strict comparisons, !=, between, case-insensitive contains and starts-with, null / not null, and an empty result says so", async () => {
    const filter = async (column: string, text: string) => {
      const box = page.getByLabel(`filter ${column}`);
      await box.fill(text);
      await box.press("Enter");
    };
    const expectRows = async (n: number) =>
      expect
        .poll(() => rowCount(), POLL)
        .toMatch(new RegExp(`^${n.toLocaleString("en-US")} rows${n === ROWS ? "" : " of"}`));
    const count = (f: (r: (typeof TABLE_ROWS)[number]) => boolean) => TABLE_ROWS.filter(f).length;

    await filter("fare", "> 54.5");
    await expectRows(count((r) => r.fare !== null && r.fare > 54.5));
    await filter("fare", ">= 54.5");
    await expectRows(count((r) => r.fare !== null && r.fare >= 54.5));
    await filter("fare", "< 45.5");
    await expectRows(count((r) => r.fare !== null && r.fare < 45.5));
    await filter("fare", "between 50 and 52");
    await expectRows(count((r) => r.fare !== null && r.fare >= 50 && r.fare <= 52));
    await filter("fare", "not null");
    await expectRows(count((r) => r.fare !== null));
    await filter("fare", "null");
    await expectRows(count((r) => r.fare === null));
    await filter("fare", "");
    await filter("city", "!= NYC");
    await expectRows(count((r) => r.city !== "NYC"));
    await filter("city", "nyc");
    await expectRows(count((r) => r.city.toLowerCase().includes("nyc")));
    await filter("city", "^SÃO");
    await expectRows(count((r) => r.city.toLowerCase().startsWith("são")));
    await filter("city", "zz-nowhere");
    await expectRows(0);
    await expect.poll(() => page.textContent('[data-testid="no-rows"]'), POLL).toMatch(/No rows match the filter/);
    await shots("filter-empty");
    await filter("city", "");
    await expectRows(ROWS);
  });

  it("8. keyboard navigation in the table, and a copy with its header row", async () => {
    await page.locator('.results-host [data-row="0"] .td').nth(3).click(); // city of row 1
    for (let i = 0; i < 3; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowRight");
    await expect.poll(() => page.textContent(".results-status"), POLL).toContain("row 4 · fare");
    await page.keyboard.press("Shift+ArrowLeft");
    await page.keyboard.press("Shift+ArrowDown");
    await page.keyboard.press("Control+C");
    await expect
      .poll(() => page.evaluate(() => navigator.clipboard.readText()), POLL)
      .toBe("city\tfare\nnyc east\t47.5\nZürich\t48.5");
    await page.keyboard.press("Control+End");
    await expect.poll(() => page.locator(`.results-host [data-row="${ROWS - 1}"]`).count(), POLL).toBe(1);
    await expect.poll(() => page.textContent(".results-status"), POLL).toContain(`row ${ROWS} · a_column`);
    await page.keyboard.press("Control+Home");
    await expect.poll(() => page.textContent(".results-status"), POLL).toContain("row 1 · trips");
  });

  it("5. a run's duration is never negative, from its first frame on", async () => {
    await page.waitForTimeout(1500); // the bar's clock was last set when the previous run ended
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { __statusSeen: string[] }).__statusSeen = []);
      new MutationObserver(() =>
        seen.push(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""),
      ).observe(document.querySelector(".runbar")!, { subtree: true, childList: true, characterData: true });
    });
    await runToEnd(/✓/);
    const seen = await page.evaluate(() => (window as unknown as { __statusSeen: string[] }).__statusSeen);
    expect(seen.some((t) => t.startsWith("running"))).toBe(true);
    expect(seen.filter((t) => /-\d/.test(t))).toEqual([]);
  });

  it("3. plots: a uniform sample sorted by x, titled axes that fit their labels, zoom that keeps the data, hover on the right point", async () => {
    await openFile("plots.ts");
    await runToEnd(/✓/);
    await page.click('[data-panel="plot"]');
    await page.waitForSelector(".plot-host canvas");
    await expect
      .poll(() => page.textContent('[data-testid="plot-note"]'), POLL)
      .toContain(`a uniform random sample of 10,000 of ${PLOT_N.toLocaleString("en-US")} rows`);
    type Host = HTMLElement & {
      plot: {
        data: number[][];
        axes: { label?: string; _size: number; _values: string[] | null; font: string[] }[];
        scales: { x: { min: number; max: number }; y: { min: number; max: number } };
        bbox: { left: number; top: number; width: number; height: number };
        cursor: { idx: number | null; left: number };
        posToVal(pos: number, scale: string): number;
      };
    };
    const shape = await page.$eval(".plot-host", (el) => {
      const u = (el as Host).plot;
      const xs = u.data[0];
      return {
        n: xs.length,
        sorted: xs.every((v, i) => i === 0 || xs[i - 1] <= v),
        min: xs[0],
        max: xs[xs.length - 1],
        labels: u.axes.map((a) => a.label),
        // Each axis is at least as wide as its widest tick label.
        fits: u.axes.slice(1).map((a) => {
          const ctx = document.createElement("canvas").getContext("2d")!;
          ctx.font = "11px system-ui, sans-serif";
          const widest = Math.max(...(a._values ?? []).map((v) => ctx.measureText(String(v)).width));
          return { size: a._size, widest };
        }),
      };
    });
    expect(shape.n).toBe(10_000);
    expect(shape.sorted).toBe(true);
    // Drawn from the whole range, not the first rows (which hold only x ≥ 40,000).
    expect(shape.min).toBeLessThan(PLOT_N * 0.02);
    expect(shape.max).toBeGreaterThan(PLOT_N * 0.98);
    expect(shape.labels).toEqual(["x", "y"]);
    for (const f of shape.fits) expect(f.size).toBeGreaterThanOrEqual(f.widest);
    await shots("plot-line");

    // Drag across the middle fifth: the zoomed chart still holds the points of that range.
    const over = (await page.locator(".plot-host .u-over").boundingBox())!;
    await page.mouse.move(over.x + over.width * 0.4, over.y + over.height / 2);
    await page.mouse.down();
    await page.mouse.move(over.x + over.width * 0.6, over.y + over.height / 2, { steps: 5 });
    await page.mouse.up();
    const zoom = await page.$eval(".plot-host", (el) => {
      const u = (el as Host).plot;
      const { min, max } = u.scales.x;
      return { min, max, inside: u.data[0].filter((v) => v >= min && v <= max).length };
    });
    expect(zoom.max - zoom.min).toBeLessThan(PLOT_N * 0.3);
    expect(zoom.inside).toBeGreaterThan(1000);
    // Hover: the legend names the point under the cursor.
    await page.mouse.move(over.x + over.width * 0.5, over.y + over.height / 2);
    const hover = await page.$eval(".plot-host", (el) => {
      const u = (el as Host).plot;
      return { at: u.posToVal(u.cursor.left, "x"), point: u.data[0][u.cursor.idx ?? 0] };
    });
    expect(Math.abs(hover.at - hover.point)).toBeLessThan((zoom.max - zoom.min) * 0.01);
    await shots("plot-zoomed");

    // The PNG: opaque, with a title strip above the chart.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="save-png"]')]);
    const png = readFileSync((await download.path())!);
    const pixels = await page.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement("canvas");
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext("2d")!;
      ctx.drawImage(img, 0, 0);
      const chart = (document.querySelector(".plot-host canvas") as HTMLCanvasElement).height;
      const strip = ctx.getImageData(0, 0, c.width, Math.max(1, img.height - chart)).data;
      let ink = 0;
      for (let i = 0; i < strip.length; i += 4) if (Math.abs(strip[i] - strip[0]) > 60) ink++;
      return { corner: [...ctx.getImageData(0, 0, 1, 1).data], extra: img.height - chart, ink };
    }, png.toString("base64"));
    expect(pixels.corner[3]).toBe(255);
    expect(pixels.extra).toBeGreaterThan(10);
    expect(pixels.ink).toBeGreaterThan(50); // the title's text

    // A text column on x: a category axis, one bar per city.
    await page.click('[data-panel="results"]');
    await page.click('[data-result-tab="by city"]');
    await expect.poll(() => rowCount(), POLL).toContain("3 rows");
    await page.click('[data-panel="plot"]');
    await page.selectOption('[aria-label="plot kind"]', "bar");
    await page.selectOption('[aria-label="x column"]', "city");
    await expect.poll(() => page.textContent('[data-testid="plot-note"]'), POLL).toContain("bar of trips per city");
    const bars = await page.$eval(".plot-host", (el) => {
      const h = el as Host & { plotData: { categories?: string[] } };
      return { cats: h.plotData.categories, ys: h.plot.data[1], ticks: h.plot.axes[0]._values };
    });
    expect(bars.cats).toEqual(["Zürich", "NYC", "Lagos"]);
    expect(bars.ys).toEqual([5, 9, 2]);
    expect(bars.ticks).toEqual(["Zürich", "NYC", "Lagos"]);
    await shots("plot-bar-categories");

    // A histogram's bars sit at their bins' centres and count from 0.
    await page.selectOption('[aria-label="plot kind"]', "histogram");
    await expect.poll(() => page.textContent('[data-testid="plot-note"]'), POLL).toContain("histogram of trips");
    const hist = await page.$eval(".plot-host", (el) => {
      const h = el as Host;
      return { xs: Array.from(h.plot.data[0] as number[]), yMin: h.plot.scales.y.min };
    });
    expect(hist.xs).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect(hist.yMin).toBe(0);

    // Nothing to draw: the note says why, and the last chart is gone.
    await page.click('[data-panel="results"]');
    await page.click('[data-result-tab="all null"]');
    await page.click('[data-panel="plot"]');
    await page.selectOption('[aria-label="plot kind"]', "histogram");
    await expect.poll(() => page.textContent('[data-testid="plot-note"]'), POLL).toContain("nothing has no histogram");
    expect(await page.locator(".plot-host canvas").count()).toBe(0);
    await page.click('[data-panel="results"]');
    await page.click('[data-result-tab="words"]');
    await page.click('[data-panel="plot"]');
    await expect.poll(() => page.textContent('[data-testid="plot-note"]'), POLL).toContain("nothing to plot");
  });

  it("6. errors point at the line: a misspelt method, a failed strict cast, TypeScript's own errors; a fixed problem goes away", async () => {
    await openFile("typo.ts");
    await runToEnd(/failed/);
    await page.waitForSelector('[data-testid="problems"] .problem');
    const typo = page.locator('[data-testid="problems"] .problem', { hasText: "BASIN_PIPELINE" });
    await expect.poll(() => typo.textContent(), POLL).toMatch(/meadian is not a function.*typo\.ts:6:\d+/);
    // TypeScript says so too, in Problems (from the editor's checker).
    await expect
      .poll(() => page.locator('[data-testid="problems"] .problem-types').allTextContents(), POLL)
      .toContainEqual(expect.stringMatching(/meadian.*TypeScript 2551.*typo\.ts:6/));
    await shots("problems");
    // Fix line 6: both problems go, without running again.
    await page.click('[data-problem-line="6"] .problem-msg');
    await page.waitForSelector(".monaco-editor.focused");
    await page.keyboard.press("End");
    await page.keyboard.press("Shift+Home");
    await page.keyboard.insertText(`  .agg(col("x").median());`);
    await expect
      .poll(() => page.evaluate(() => document.querySelector(".view-lines")?.textContent ?? ""), POLL)
      .toContain("median()");
    await expect.poll(() => page.locator('[data-testid="problems"] .problem').count(), POLL).toBe(0);

    await openFile("cast.ts");
    await runToEnd(/failed/);
    await expect
      .poll(() => page.textContent('[data-testid="problems"] .problem'), POLL)
      .toMatch(/BASIN_CAST.*cast\.ts:5:\d+/);
  });

  it("8. a data file opens as a preview of its rows, with Run off", async () => {
    await page.click('[data-path="trips.csv"]');
    await page.waitForSelector('[data-testid="preview"] [data-row="0"]');
    await expect
      .poll(() => page.locator('[data-testid="preview"] [data-row="0"] .td').nth(1).textContent(), POLL)
      .toBe("Zürich");
    expect(await page.textContent('[data-testid="preview"]')).toContain("the first 30 rows");
    // The first row is below the header, not under it (a preview has no filter row).
    const head = (await page.locator('[data-testid="preview"] .results-head').boundingBox())!;
    const first = (await page.locator('[data-testid="preview"] [data-row="0"]').boundingBox())!;
    expect(first.y).toBeGreaterThanOrEqual(head.y + head.height - 1);
    expect(await page.locator('[data-testid="run"]').isDisabled()).toBe(true);
    await page.keyboard.press("Control+Enter");
    await page.waitForTimeout(300);
    expect(await status()).not.toMatch(/trips\.csv/);
    await shots("csv-preview");
  });

  it("8. at 1100×700 the editor keeps its room and Run / Stop stay on one line", async () => {
    await page.evaluate(() => {
      const l = JSON.parse(localStorage.getItem("basin.layout.v1") ?? "{}");
      localStorage.setItem("basin.layout.v1", JSON.stringify({ ...l, panelHeight: 598, activeFile: "table.ts" }));
    });
    await page.setViewportSize(SMALL);
    await page.reload();
    await page.waitForSelector('[data-tab="table.ts"].active');
    const editor = (await page.locator(".editor-area").boundingBox())!;
    expect(editor.height).toBeGreaterThanOrEqual(170);
    for (const b of ["run", "stop"]) {
      const box = (await page.locator(`[data-testid="${b}"]`).boundingBox())!;
      expect(box.height, `${b} wraps`).toBeLessThan(30);
    }
    await page.screenshot({ path: join(ARTIFACTS, "defects-small-window-1100x700.png") });
    await page.setViewportSize(LARGE);
  });

  it("4. a reload brings back the results, the output and the run; the store does not grow over reloads", async () => {
    await openFile("table.ts");
    await page.click('[data-panel="results"]');
    await runToEnd(/✓ table\.ts/);
    await expect.poll(() => rowCount(), POLL).toContain(`${ROWS} rows`);
    // The column summary is complete: its profiles' plans hold no tables now.
    await page.waitForSelector('[data-testid="summary-complete"]', POLL);
    const before = await storeStats();
    for (let i = 0; i < 3; i++) {
      await page.reload();
      // The result is there again, without running.
      await expect.poll(() => rowCount(), POLL).toContain(`${ROWS} rows`);
      await expect.poll(() => cellText(1, 2), POLL).toBe("NYC");
      await expect.poll(() => status(), POLL).toMatch(/✓ table\.ts · \d/);
      await page.click('[data-panel="output"]');
      await expect.poll(() => page.textContent('[data-testid="output"]'), POLL).toMatch(/finished in/);
      await page.click('[data-panel="results"]');
      await page.click(".monaco-editor .view-lines");
      await runToEnd(/✓ table\.ts/);
      await expect.poll(() => rowCount(), POLL).toContain(`${ROWS} rows`);
      // Tables and bytes read together: a profile of the new result may still hold one a moment.
      await expect
        .poll(async () => {
          const s = await storeStats();
          return [s.tables, s.bytes];
        }, POLL)
        .toEqual([before.tables, before.bytes]);
    }
    await shots("reloaded");

    // A reload mid-run: the run is shown going, then finished.
    await openFile("slow.ts");
    await page.click('[data-testid="run"]');
    await expect.poll(() => status(), POLL).toMatch(/running/);
    await page.reload();
    await expect.poll(() => status(), POLL).toMatch(/running slow\.ts · \d/);
    await expect.poll(() => status(), { timeout: 60_000 }).toMatch(/✓ slow\.ts/);
    await expect.poll(() => rowCount(), POLL).toContain("3 rows");
  });

  it("4. results of a page that is gone are released after the grace period", async () => {
    // The shown result's column summary is complete: its profiles' plans hold no tables now.
    await page.waitForSelector('[data-testid="summary-complete"]', POLL);
    const before = await storeStats();
    const other = await browser.newContext({ viewport: LARGE });
    const p = await newPage(other);
    await p.goto(server.url);
    await openFile("table.ts", p);
    await runToEnd(/✓ table\.ts/, p);
    await expect.poll(() => rowCount(p), POLL).toContain(`${ROWS} rows`);
    await p.waitForSelector('[data-testid="summary-complete"]', POLL);
    expect((await storeStats()).tables).toBeGreaterThan(before.tables);
    await other.close();
    await expect.poll(async () => (await storeStats()).tables, { timeout: GRACE_MS + 20_000 }).toBe(before.tables);
  });

  it("4. unsaved edits warn before the page goes; Ctrl+S asks before overwriting a file changed on disk", async () => {
    await openFile("table.ts");
    // A real click and key press: Chromium asks before unloading only a page the user has interacted with.
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.type("// edited here\n");
    await expect.poll(() => page.locator('[data-tab="table.ts"] .dirty-dot').count(), POLL).toBe(1);
    const leaving = page.waitForEvent("dialog", { timeout: 15_000 });
    void page.evaluate(() => location.reload()).catch(() => {});
    const d = await leaving;
    expect(d.type()).toBe("beforeunload");
    await d.dismiss();
    await page.waitForTimeout(300);
    expect(await page.locator('[data-tab="table.ts"] .dirty-dot').count()).toBe(1); // still here, still edited

    // Someone else changes the file: Ctrl+S asks; Cancel keeps theirs.
    writeFileSync(join(dir, "table.ts"), TABLE + "// changed on disk\n");
    const asked = page.waitForEvent("dialog");
    await page.click(".monaco-editor .view-lines");
    // Not awaited before the dialog is answered: a key press that opens a dialog returns
    // only once it is closed (when the page asks fast enough, awaiting it here hung the test).
    const pressed = page.keyboard.press("Control+S");
    const confirm = await asked;
    expect(confirm.type()).toBe("confirm");
    expect(confirm.message()).toMatch(/table\.ts changed on disk/);
    await confirm.dismiss();
    await pressed;
    await page.waitForTimeout(300);
    expect(readFileSync(join(dir, "table.ts"), "utf8")).toContain("// changed on disk");
    // Again, and OK: this editor's text is written.
    page.once("dialog", (c) => void c.accept());
    await page.keyboard.press("Control+S");
    await expect.poll(() => readFileSync(join(dir, "table.ts"), "utf8"), POLL).toContain("// edited here");
    expect(readFileSync(join(dir, "table.ts"), "utf8")).not.toContain("// changed on disk");
    await expect.poll(() => page.locator('[data-tab="table.ts"] .dirty-dot').count(), POLL).toBe(0);
  });

  it("takes a screenshot of the remaining screens at both sizes", async () => {
    await page.click('[data-panel="output"]');
    await shots("output");
    await page.click('[data-panel="cluster"]');
    await page.waitForSelector('[data-testid="cluster"]');
    await shots("cluster");
    expect(pageErrors.filter((m) => !/scrollIntoView broke/.test(m))).toEqual([]);
  });
});

// The browser workbench end to end: a real `serve()` on 127.0.0.1, Debian's
// chromium driven by playwright-core. Opens a pipeline, types into Monaco (with
// the `basin` typings answering), runs it, scrolls a 10-million-row result to its
// last row, sorts and filters in the engine, plots, shows an engine error as a
// marker and a problem, stops a long run, keeps the layout across a reload, shows
// show() results in tabs and exports them, survives a reload mid-run and a server
// restart, and (with a stand-in preload) uses the desktop port and its restart.
// Screenshots of the main views go to test-artifacts/.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LocalCluster } from "../../engine/api/index.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { launchChromium } from "../helpers/browser.js";

const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
/** 4000 × 2500: the large result the table scrolls through. */
const BIG_ROWS = 10_000_000;
/** expect.poll waits 1 s by default; the CI machine may be busy, so polls get a roomy (still bounded) budget. */
const POLL = { timeout: 30_000 };

const SMALL = `import { fromColumns, col } from "basin";

const n = Array.from({ length: 500 }, (_, i) => i);
export default fromColumns({
  n,
  city: n.map((i) => (i % 7 === 0 ? null : ["Zürich", "東京", "São Paulo", "NYC"][i % 4])),
  fare: n.map((i) => (i % 11 === 0 ? null : (i * 37) % 101 + 0.5)),
}, { partitions: [0, 1, 495, 0, 4] });
`;

const BIG = `import { fromColumns, col } from "basin";

const A = 4000, B = 2500;
const left = fromColumns({ k: new Array(A).fill(0), a: Array.from({ length: A }, (_, i) => i) }, { partitions: 4 });
const right = fromColumns({ k: new Array(B).fill(0), b: Array.from({ length: B }, (_, i) => i) });

export default left
  .join(right, { on: "k" })
  .withColumns({ i: col("a").mul(B).add(col("b")), x: col("b").mul(0.5) })
  .select("i", "a", "b", "x");
`;

const SHOWS = `import { fromColumns, col, count, show } from "basin";

const n = Array.from({ length: 300 }, (_, i) => i);
const t = fromColumns({ n, city: n.map((i) => ["Zürich", "東京", null][i % 3]) }, { partitions: [0, 1, 299] });
show(t.groupBy("city").agg(count().alias("trips")).sort("city"), "by city");
export default t.filter(col("n").lt(5));
`;

const ARRAY = `import { array } from "basin";
export default array.arange(0, 60000, 1, { chunks: 7000 }).reshape([300, 200]).mul(2);
`;
/** Evaluating takes ~1.5 s: long enough to reload the page in the middle of the run. */
const SLOW = `import { fromColumns } from "basin";

const t0 = Date.now();
while (Date.now() - t0 < 1500) {}
export default fromColumns({ done: [1, 2] });
`;

/**
 * Stands in for electron/preload.ts in a plain browser page: window.basin.connect()
 * hands the page a MessagePort, as the desktop app does, with a stand-in engine on
 * the other end that answers the start-up requests and can "crash" and restart.
 */
const FAKE_DESKTOP = `(() => {
  const channel = new MessageChannel();
  const engine = channel.port2;
  window.__engineRequests = [];
  engine.onmessage = (e) => {
    const m = e.data;
    if (m.control === "restartEngine") return engine.postMessage({ engineProcess: { state: "running" } });
    window.__engineRequests.push(m.method);
    const results = { workspace: { root: "/desktop", files: ["desktop.ts"] }, readFile: "export default 1;\\n", cluster: { kind: "local", workers: [{ name: "w0", kind: "cpu", busy: false }], store: { tables: 0, bytes: 0, peakBytes: 0 } } };
    engine.postMessage(m.method in results ? { id: m.id, result: results[m.method] } : { id: m.id, error: { name: "BasinError", code: "BASIN_INTERNAL", message: "not in this test" } });
  };
  window.__crashEngine = () => engine.postMessage({ engineProcess: { state: "crashed", message: "The engine process was killed (SIGKILL).\\nRestart it to go on; results of earlier runs are gone." } });
  window.basin = { desktop: true, connect: () => setTimeout(() => window.postMessage("basin:engine-port", "*", [channel.port1]), 10) };
})();`;

let dir: string;
let server: RunningServer;
let cluster: LocalCluster;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (!existsSync(join(ROOT, "dist/renderer/index.html")))
    execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "basin-e2e-"));
  writeFileSync(join(dir, "small.ts"), SMALL);
  writeFileSync(join(dir, "big.ts"), BIG);
  writeFileSync(join(dir, "shows.ts"), SHOWS);
  writeFileSync(join(dir, "slow.ts"), SLOW);
  writeFileSync(join(dir, "grid.ts"), ARRAY);
  writeFileSync(join(dir, "loops.ts"), `// never finishes evaluating: for Stop\nwhile (true) {}\nexport default 1;\n`);
  cluster = new LocalCluster({ workers: 2 });
  server = await serve({ root: dir, cluster, assets: join(ROOT, "dist/renderer") });
  browser = await launchChromium();
  const context = await browser.newContext({
    viewport: { width: 1400, height: 900 },
    permissions: ["clipboard-read", "clipboard-write"],
  });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  page.on("pageerror", (e) => console.error("page error:", e.message));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await cluster?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
const cellText = (row: number, col: number) =>
  page
    .locator(`[data-row="${row}"] .td`)
    .nth(col + 1)
    .textContent();

async function runAndWait(status: RegExp, timeout = 30_000): Promise<void> {
  await page.keyboard.press("Control+Enter");
  await page.waitForFunction(
    (re) => new RegExp(re).test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""),
    status.source,
    { timeout },
  );
}

describe("workbench in the browser", { timeout: 120_000 }, () => {
  it("opens a pipeline, completes `basin` API names, runs edited text and shows the first rows", async () => {
    await page.goto(server.url);
    // The token leaves the address bar once the page has it (the client keeps it).
    await page.waitForFunction(() => !location.search.includes("token"));
    expect(page.url()).toBe(`http://127.0.0.1:${server.port}/`);
    await page.click('[data-path="small.ts"]');
    await page.waitForSelector(".monaco-editor .view-lines");
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("fromColumns"));
    // Type at the end of the default export: a filter, then ask for completions on col(…).
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.press("Backspace"); // the trailing newline
    await page.keyboard.press("Backspace"); // the ';'
    // A prefix narrows the list: Expr has more methods than the widget shows at once.
    await page.keyboard.insertText(`\n  .filter(col("n").isN`);
    await page.keyboard.press("Control+Space");
    const suggest = page.locator(".suggest-widget .monaco-list-row", { hasText: "isNotNull" });
    await suggest.first().waitFor({ timeout: 30_000 });
    await page.keyboard.press("Escape");
    for (let i = 0; i < 3; i++) await page.keyboard.press("Backspace");
    await page.keyboard.insertText(`ge(3));\n`);
    await expect.poll(() => page.locator('[data-tab="small.ts"] .dirty-dot').count(), POLL).toBe(1);
    await runAndWait(/✓/);
    await page.waitForSelector('[data-row="0"]');
    await expect.poll(() => cellText(0, 0), POLL).toBe("3");
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toContain("497 rows");
    await expect.poll(() => cellText(0, 1), POLL).toBe("NYC");
    await expect.poll(() => cellText(1, 1), POLL).toBe("Zürich");
    await expect.poll(() => page.locator('[data-testid="profile"]').count(), { timeout: 20_000 }).toBe(3);
    await shot("results-small");
    // Select two rows × two columns and copy them as TSV.
    await page.locator('[data-row="0"] .td').nth(2).click();
    await page
      .locator('[data-row="1"] .td')
      .nth(3)
      .click({ modifiers: ["Shift"] });
    await page.keyboard.press("Control+C");
    await expect
      .poll(() => page.evaluate(() => navigator.clipboard.readText()), POLL)
      .toBe("city\tfare\nNYC\t10.5\nZürich\t47.5");
    // Ctrl+S saves: the dot goes away.
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+S");
    await expect.poll(() => page.locator('[data-tab="small.ts"] .dirty-dot').count(), POLL).toBe(0);
  });

  it("shows a type error from the real declarations as a squiggle", async () => {
    await page.keyboard.press("Control+End");
    await page.keyboard.insertText(`const wrong: number = col("n");\n`);
    await page.waitForSelector(".monaco-editor .squiggly-error", { timeout: 30_000 });
    await page.keyboard.press("ArrowUp");
    await page.keyboard.press("Control+Shift+K"); // delete that line again
    await page.waitForFunction(() => !document.querySelector(".view-lines")?.textContent?.includes("wrong"));
    await page.waitForFunction(() => !document.querySelector(".monaco-editor .squiggly-error"), undefined, {
      timeout: 30_000,
    });
  });

  it(`scrolls a ${BIG_ROWS.toLocaleString("en-US")}-row result to its last row, paging only what is visible`, async () => {
    await page.click('[data-path="big.ts"]');
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("left"));
    await page.click(".monaco-editor .view-lines");
    await runAndWait(/✓/, 60_000);
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toContain("10,000,000 rows");
    await expect.poll(() => cellText(0, 0), POLL).toBe("0");
    await page.$eval(".results-scroller", (el) => (el.scrollTop = el.scrollHeight / 2));
    await expect.poll(() => page.locator(".tr.row .td.rownum").first().textContent(), POLL).not.toBe("1");
    const last = page.locator(`[data-row="${BIG_ROWS - 1}"]`);
    // Scrolled to the bottom (again on each poll: on a loaded machine one scroll event may land before the grid listens).
    await expect
      .poll(
        async () => (await page.$eval(".results-scroller", (el) => (el.scrollTop = el.scrollHeight)), last.count()),
        POLL,
      )
      .toBe(1);
    await expect.poll(() => cellText(BIG_ROWS - 1, 0), POLL).toBe(String(BIG_ROWS - 1));
    await expect.poll(() => cellText(BIG_ROWS - 1, 3), POLL).toBe("1249.5");
    const box = await last.boundingBox();
    const scroller = await page.locator(".results-scroller").boundingBox();
    expect(box!.y + box!.height).toBeLessThanOrEqual(scroller!.y + scroller!.height + 1);
    await shot("results-10m-last-row");
    // The keyboard reaches every row too: Ctrl+Home, Ctrl+End, then one up from the last row.
    await page
      .locator(`[data-row="${BIG_ROWS - 1}"] .td`)
      .nth(1)
      .click();
    await page.keyboard.press("Control+Home");
    await expect.poll(() => page.locator('[data-row="0"]').count(), POLL).toBe(1);
    await page.keyboard.press("Control+End");
    await expect.poll(() => last.count(), POLL).toBe(1);
    await page.keyboard.press("ArrowUp");
    await expect.poll(() => page.locator(`[data-row="${BIG_ROWS - 2}"]`).count(), POLL).toBe(1);
    const above = await page.locator(`[data-row="${BIG_ROWS - 2}"]`).boundingBox();
    const head = await page.locator(".results-head").boundingBox();
    expect(above!.y, "below the sticky header").toBeGreaterThanOrEqual(head!.y + head!.height - 1);
  });

  it("sorts by a column and filters in the engine", async () => {
    await page.click('.th[data-column="b"] .th-sort'); // ascending
    await page.click('.th[data-column="b"] .th-sort'); // descending
    await expect
      .poll(() => page.locator('.th[data-column="b"] .th-sortmark').textContent(), { timeout: 60_000 })
      .toBe("▼");
    await page.waitForFunction(() => !document.querySelector(".spinner-text"), undefined, { timeout: 60_000 });
    await expect.poll(() => cellText(0, 2), { timeout: 30_000 }).toBe("2499");
    const filter = page.getByLabel("filter a");
    await filter.fill("10..11");
    await filter.press("Enter");
    await expect
      .poll(() => page.textContent('[data-testid="row-count"]'), { timeout: 60_000 })
      .toContain("5,000 rows of 10,000,000");
    await expect.poll(() => cellText(0, 2), POLL).toBe("2499");
    await expect.poll(() => cellText(1, 2), POLL).toBe("2499");
    await expect.poll(() => cellText(2, 2), POLL).toBe("2498");
    await shot("results-sorted-filtered");
  });

  it("plots result columns with uPlot", async () => {
    await page.click('[data-panel="plot"]');
    await page.waitForSelector('[data-testid="plot"] canvas');
    await page.selectOption('[aria-label="plot kind"]', "scatter");
    await expect.poll(() => page.textContent('[data-testid="plot"]'), POLL).toContain("scatter");
    await page.selectOption('[aria-label="plot kind"]', "histogram");
    await expect.poll(() => page.textContent('[data-testid="plot"]'), POLL).toContain("histogram of");
    await page.waitForSelector('[data-testid="plot"] canvas');
    await shot("plot");
  });

  it("marks the line of an engine error and lists it in Problems", async () => {
    await page.click('[data-tab="small.ts"]');
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.insertText(`export const unused = 1;\n`);
    // Line 9 then filters on a column that does not exist: valid TypeScript, an engine error.
    const text = await page.evaluate(() => document.querySelector(".view-lines")?.textContent ?? "");
    expect(text).toContain("ge(3)");
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Control+F");
    await page.keyboard.insertText(`col("n").ge(3)`);
    await page.keyboard.press("Escape");
    await page.keyboard.insertText(`col("nope").ge(3)`);
    await runAndWait(/failed/);
    await page.waitForSelector('[data-testid="problems"] .problem');
    const problem = await page.textContent('[data-testid="problems"] .problem');
    expect(problem).toContain("nope");
    expect(problem).toMatch(/small\.ts:9:\d+/);
    // col("nope") type-checks, so this squiggle is the engine's marker.
    expect(await page.evaluate(() => document.querySelector(".view-lines")?.textContent ?? "")).not.toContain("wrong");
    await page.waitForSelector(".monaco-editor .squiggly-error");
    await shot("problem-marker");
  });

  it("stops a long run", async () => {
    await page.click('[data-path="loops.ts"]');
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("while"));
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+Enter");
    await page.waitForFunction(() =>
      /running/.test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""),
    );
    await page.click('[data-testid="stop"]');
    await page.waitForFunction(
      () => /stopped/.test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""),
      undefined,
      { timeout: 20_000 },
    );
  });

  it("shows the cluster and keeps the layout across a reload", async () => {
    await page.click('[data-panel="cluster"]');
    await expect.poll(() => page.locator('[data-testid="cluster"] .worker').count(), POLL).toBe(2);
    await page.click('[data-testid="theme"]');
    await expect.poll(() => page.evaluate(() => document.documentElement.dataset.theme), POLL).toBe("light");
    await shot("cluster-light");
    // Drag the splitter above the bottom panel 120 px up: the panel grows.
    const before = (await page.locator(".panel").boundingBox())!.height;
    const bar = (await page.locator(".splitter.horizontal").boundingBox())!;
    await page.mouse.move(bar.x + 200, bar.y + 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + 200, bar.y - 60, { steps: 4 });
    await page.mouse.move(bar.x + 200, bar.y - 118, { steps: 4 });
    await page.mouse.up();
    const grown = (await page.locator(".panel").boundingBox())!.height;
    expect(grown).toBeGreaterThan(before + 100);
    await page.reload();
    await page.waitForSelector('[data-tab="loops.ts"].active');
    expect(await page.locator(".tab").allTextContents()).toEqual(
      ["small.ts×", "big.ts×", "loops.ts×"].map((t) => expect.stringContaining(t.slice(0, -1))),
    );
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("light");
    await page.waitForSelector('[data-testid="cluster"]');
    expect((await page.locator(".panel").boundingBox())!.height).toBeCloseTo(grown, 0);
    await shot("reloaded");
  });

  it("shows each show() result in its own tab and exports the shown rows as CSV and Parquet", async () => {
    await page.click('[data-path="shows.ts"]');
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("groupBy"));
    await page.click(".monaco-editor .view-lines");
    await page.click('[data-panel="results"]');
    await runAndWait(/✓/);
    await expect.poll(() => page.locator("[data-result-tab]").allTextContents(), POLL).toEqual(["default", "by city"]);
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toContain("5 rows");
    // The default export as CSV: the button asks where, then the file is in the workspace.
    page.once("dialog", (d) => void d.accept("exports/first.csv"));
    await page.click('[data-testid="export-csv"]');
    await expect.poll(() => page.textContent('[data-testid="exported"]'), POLL).toContain("exports/first.csv");
    expect(readFileSync(join(dir, "exports/first.csv"), "utf8")).toBe(
      "n,city\n0,Zürich\n1,東京\n2,\n3,Zürich\n4,東京\n",
    );
    await page.waitForSelector('[data-path="exports/first.csv"]'); // the explorer lists it
    // The named result in its tab, exported as Parquet under the suggested name.
    await page.click('[data-result-tab="by city"]');
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toContain("3 rows");
    await expect.poll(() => cellText(0, 0), POLL).toBe("Zürich");
    await expect.poll(() => cellText(1, 1), POLL).toBe("100");
    let suggested = "";
    page.once("dialog", (d) => ((suggested = d.defaultValue()), void d.accept(suggested)));
    await page.click('[data-testid="export-parquet"]');
    await expect.poll(() => page.textContent('[data-testid="exported"]'), POLL).toContain("shows-by-city.parquet");
    expect(suggested).toBe("shows-by-city.parquet");
    expect(readFileSync(join(dir, "shows-by-city.parquet")).subarray(0, 4).toString()).toBe("PAR1");
    await shot("result-tabs");
  });

  it("shows an array result: its shape, dtype and chunks, a heatmap, and its elements in the table", async () => {
    await page.click('[data-path="grid.ts"]');
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("arange"));
    await page.click(".monaco-editor .view-lines");
    await page.click('[data-panel="results"]');
    await runAndWait(/✓/);
    await expect
      .poll(() => page.textContent('[data-testid="array-description"]'), POLL)
      .toMatch(/^int64 array \(300, 200\), chunks/);
    await page.waitForSelector('[data-testid="array-heatmap"]');
    // The canvas holds the engine's 128 × 128 block means: its corners differ (the array grows along both axes).
    const corners = await page.evaluate(() => {
      const c = document.querySelector('[data-testid="array-heatmap"]') as HTMLCanvasElement;
      const ctx = c.getContext("2d")!;
      return [
        c.width,
        c.height,
        [...ctx.getImageData(0, 0, 1, 1).data],
        [...ctx.getImageData(c.width - 1, c.height - 1, 1, 1).data],
      ];
    });
    expect(corners.slice(0, 2)).toEqual([128, 128]);
    expect(corners[2]).not.toEqual(corners[3]);
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toContain("300 rows");
    await expect.poll(() => cellText(0, 1), POLL).toBe("2");
    await expect.poll(() => cellText(1, 0), POLL).toBe("400");
    await shot("array-result");
  });

  it("keeps the engine working across a page reload mid-run, and reconnects to a restarted server", async () => {
    await page.click('[data-path="slow.ts"]');
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("Date.now"));
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+Enter");
    await page.waitForFunction(() =>
      /running/.test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""),
    );
    await page.reload();
    await page.waitForSelector('[data-tab="slow.ts"].active');
    await expect.poll(() => page.textContent('[data-testid="connection"]'), POLL).toContain("engine");
    await page.click(".monaco-editor .view-lines");
    await runAndWait(/✓ slow\.ts/);
    await expect.poll(() => page.textContent('[data-testid="row-count"]'), POLL).toContain("2 rows");

    // The server stops and comes back on the same port: the page notices and reconnects by itself.
    const { port, token } = server;
    await server.close();
    await expect.poll(() => page.textContent('[data-testid="connection"]'), POLL).not.toContain("engine");
    server = await serve({ root: dir, cluster, assets: join(ROOT, "dist/renderer"), port, token });
    await expect.poll(() => page.textContent('[data-testid="connection"]'), POLL).toContain("engine");
    await page.click('[data-tab="shows.ts"]');
    await page.click(".monaco-editor .view-lines");
    await runAndWait(/✓ shows\.ts/);
    await expect.poll(() => page.locator("[data-result-tab]").count(), POLL).toBe(2);
  });

  it("in the desktop app's page, talks over window.basin's port and offers a restart when the engine stops", async () => {
    const desktop = await page.context().newPage();
    try {
      await desktop.addInitScript(FAKE_DESKTOP);
      await desktop.goto(server.url);
      await desktop.waitForSelector('[data-path="desktop.ts"]'); // listed by the port's engine, not the server's
      expect(
        await desktop.evaluate(() => (window as unknown as { __engineRequests: string[] }).__engineRequests),
      ).toContain("workspace");
      await expect.poll(() => desktop.textContent('[data-testid="connection"]'), POLL).toContain("engine");
      await desktop.evaluate(() => (window as unknown as { __crashEngine(): void }).__crashEngine());
      await desktop.waitForSelector('[data-testid="engine-crashed"]');
      expect(await desktop.textContent('[data-testid="engine-crashed"]')).toMatch(
        /The engine stopped.*killed \(SIGKILL\)/s,
      );
      await desktop.screenshot({ path: join(ARTIFACTS, "engine-crashed.png") });
      await desktop.click('[data-testid="restart-engine"]');
      await desktop.waitForSelector('[data-testid="engine-crashed"]', { state: "detached" });
      await expect.poll(() => desktop.textContent('[data-testid="connection"]'), POLL).toContain("engine");
    } finally {
      await desktop.close();
    }
  });
});

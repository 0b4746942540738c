// A served workbench and Debian's chromium for the end-to-end tests: one real
// `serve()` on 127.0.0.1 over a temporary workspace and one browser page, with the
// helpers every e2e file uses (open a file, run it, take a screenshot at both sizes).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { expect } from "vitest";
import { LocalCluster, type LocalClusterOptions } from "../../engine/api/index.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";

export const ROOT = resolve(import.meta.dirname, "../..");
export const ARTIFACTS = join(ROOT, "test-artifacts");
export const LARGE = { width: 1600, height: 1000 };
export const SMALL = { width: 1100, height: 700 };
export const POLL = { timeout: 30_000 };

/**
 * Debian's chromium, headless, without the network chatter a test does not need.
 *
 * @example
 * const browser = await launchChromium();
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
    ],
  });
}

export interface Workbench {
  dir: string;
  server: RunningServer;
  cluster: LocalCluster;
  browser: Browser;
  page: Page;
  /** Messages of uncaught errors in the page. */
  pageErrors: string[];
  close(): Promise<void>;
}

/**
 * Serves a workspace holding `files` (name → text; a function of the workspace's folder
 * for pipelines that name files in it, as paths are resolved from the engine's folder)
 * and opens it in chromium at 1600×1000.
 */
export async function openWorkbench(
  files: Record<string, string> | ((dir: string) => Record<string, string>),
  clusterOptions: LocalClusterOptions = { workers: 2 },
): Promise<Workbench> {
  if (!existsSync(join(ROOT, "dist/renderer/index.html")))
    execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  mkdirSync(ARTIFACTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), "basin-e2e-"));
  for (const [name, text] of Object.entries(typeof files === "function" ? files(dir) : files))
    writeFileSync(join(dir, name), text);
  const cluster = new LocalCluster(clusterOptions);
  const server = await serve({ root: dir, cluster, assets: join(ROOT, "dist/renderer") });
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: LARGE, permissions: ["clipboard-read", "clipboard-write"] });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const pageErrors: string[] = [];
  page.on("pageerror", (e) => pageErrors.push(e.message));
  await page.goto(server.url);
  return {
    dir,
    server,
    cluster,
    browser,
    page,
    pageErrors,
    async close() {
      await browser.close();
      await server.close();
      await cluster.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Opens a workspace file from the explorer (a pipeline: waits for the editor to show it). */
export async function openFile(page: Page, path: string): Promise<void> {
  await page.click(`[data-path="${path}"]`);
  await page.waitForSelector(`[data-tab="${path}"].active`);
  if (path.endsWith(".ts")) {
    await page.waitForFunction(() => (document.querySelector(".view-lines")?.textContent ?? "").includes("basin"));
    await page.click(".monaco-editor .view-lines");
  }
}

export const runStatus = (page: Page) => page.textContent('[data-testid="run-status"]');

/** Clicks Run and waits until the run bar's status matches. */
export async function runToEnd(page: Page, pattern: RegExp = /✓/): Promise<void> {
  await page.click('[data-testid="run"]');
  await expect.poll(() => runStatus(page), { timeout: 120_000 }).toMatch(pattern);
}

/** The screen as it is, at 1600×1000 and 1100×700, as test-artifacts/<name>-<size>.png. */
export async function screenshots(page: Page, name: string): Promise<void> {
  for (const size of [LARGE, SMALL]) {
    await page.setViewportSize(size);
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${size.width}x${size.height}.png`) });
  }
  await page.setViewportSize(LARGE);
  await page.waitForTimeout(150);
}

/** Writes a workspace file while the workbench runs (the explorer shows it after a refresh). */
export function writeWorkspaceFile(w: Workbench, name: string, text: string): void {
  writeFileSync(join(w.dir, name), text);
}

/** Gives the bottom panel `px` of height (as dragging its splitter would), keeping the page's session. */
export async function setPanelHeight(page: Page, px: number): Promise<void> {
  await page.evaluate((h) => {
    const key = "basin.layout.v1";
    const layout = JSON.parse(localStorage.getItem(key) ?? "{}") as Record<string, unknown>;
    localStorage.setItem(key, JSON.stringify({ ...layout, panelHeight: h }));
  }, px);
  await page.reload();
  await page.waitForSelector('[data-testid="run"]');
}

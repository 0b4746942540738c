// The browser workbench on a remote Basin engine (a real sshd on 127.0.0.1 stands
// for the host): the explorer lists the host's workspace and names it, a file opened
// and saved with Ctrl+S is written on the host's side, and Ctrl+Enter runs it there.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { launchChromium } from "../helpers/browser.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SshProfile } from "../../engine/cluster/profiles.js";
import { RemoteEngine } from "../../engine/cluster/remote/remote_engine.js";
import { serve, type RunningServer } from "../../engine/server/http_server.js";
import { BASIN_BIN, makeTempDir, removeDir, writeText } from "../helpers/cli.js";
import { startSshd, type Sshd } from "../remote/sshd_procs.js";

const ROOT = resolve(import.meta.dirname, "../..");
const ARTIFACTS = join(ROOT, "test-artifacts");
const POLL = { timeout: 30_000 };
const PIPELINE = `import { readCsv } from "basin";\nexport default readCsv("data.csv");\n`;

let sshd: Sshd;
let remoteWs: string;
let localWs: string;
let profile: SshProfile;
let engine: RemoteEngine;
let server: RunningServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  sshd = await startSshd();
  remoteWs = makeTempDir("basin-remote-e2e-ws-");
  localWs = makeTempDir("basin-remote-e2e-local-");
  writeText(remoteWs, "data.csv", "a,b\n1,x\n2,y\n3,z\n");
  writeText(remoteWs, "p.ts", PIPELINE);
  writeText(localWs, "local-only.ts", "export default 1;\n");
  profile = {
    kind: "ssh",
    name: "box",
    host: "127.0.0.1",
    port: sshd.port,
    user: process.env.USER ?? "root",
    keyPath: sshd.clientKey,
    knownHosts: sshd.knownHosts,
    basin: `BASIN_WORKERS=1 ${process.execPath} ${BASIN_BIN}`,
    workspace: remoteWs,
  };
  engine = await RemoteEngine.connect(profile);
  server = await serve({ root: localWs, remote: engine, assets: join(ROOT, "dist/renderer") });
  browser = await launchChromium();
  page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  page.setDefaultTimeout(30_000);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await engine?.stopRemote();
  await sshd?.stop();
  removeDir(remoteWs);
  removeDir(localWs);
}, 60_000);

describe("workbench on a remote engine", { timeout: 90_000 }, () => {
  it("the explorer lists and names the host's workspace; Ctrl+S saves on the host; Ctrl+Enter runs there", async () => {
    await page.goto(server.url);
    await page.waitForSelector('[data-path="p.ts"]');
    expect(await page.locator("[data-path]").evaluateAll((els) => els.map((e) => e.getAttribute("data-path")))).toEqual(
      ["data.csv", "p.ts"],
    );
    expect(await page.locator(".workspace-host").textContent()).toContain(`${engine.where}:${remoteWs}`);
    await page.click('[data-path="p.ts"]');
    await page.waitForFunction(() => document.querySelector(".view-lines")?.textContent?.includes("readCsv"));
    await page.click(".monaco-editor .view-lines");
    await page.keyboard.press("Control+End");
    await page.keyboard.insertText("// edited in the browser\n");
    await page.keyboard.press("Control+S");
    await expect
      .poll(() => readFileSync(join(remoteWs, "p.ts"), "utf8"), POLL)
      .toBe(`${PIPELINE}// edited in the browser\n`);
    expect(existsSync(join(localWs, "p.ts"))).toBe(false);
    await page.keyboard.press("Control+Enter");
    await page.waitForFunction(
      () => /✓ p\.ts/.test(document.querySelector('[data-testid="run-status"]')?.textContent ?? ""),
      undefined,
      { timeout: 30_000 },
    );
    await expect.poll(() => page.locator('[data-row="2"] .td').nth(2).textContent(), POLL).toBe("z"); // the host's data.csv, third row
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "remote-workbench.png") });
  });
});

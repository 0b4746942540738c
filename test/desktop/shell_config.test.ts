// The desktop shell's configuration, checked without Electron: the window's
// security flags and CSP, what it may load (offline), the renderer's choice of
// transport, the packaging file, and `npm start`'s message when no Electron
// binary is installed.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { allowedUrl, APP_ORIGIN, DESKTOP_CSP, windowOptions } from "../../electron/window_options.js";
import { contentSecurityPolicy } from "../../engine/server/csp.js";
import { PortEngineClient, type PortLike } from "../../renderer/common/port_client.js";
import {
  chooseTransport,
  createClient,
  PORT_MESSAGE,
  receiveBridgePort,
  type MessageTarget,
} from "../../renderer/common/transport.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** The CSP's directives by name. */
function directives(csp: string): Record<string, string[]> {
  return Object.fromEntries(
    csp
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .map(([k, ...v]) => [k, v]),
  );
}

describe("desktop window", () => {
  it("is sandboxed and context-isolated, with no Node integration anywhere", () => {
    const o = windowOptions("/app/dist/electron/preload.cjs");
    expect(o.webPreferences).toMatchObject({
      preload: "/app/dist/electron/preload.cjs",
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
    });
  });

  it("has a strict CSP: own scripts only, no eval, nothing remote; the browser server's minus its WebSocket", () => {
    const d = directives(DESKTOP_CSP);
    expect(d["default-src"]).toEqual(["'self'"]);
    expect(d["script-src"]).toEqual(["'self'"]);
    expect(d["connect-src"]).toEqual(["'self'"]);
    expect(d["object-src"]).toEqual(["'none'"]);
    expect(DESKTOP_CSP).not.toMatch(/unsafe-eval|https?:|\*\.|ws:/);
    const server = directives(contentSecurityPolicy({ websocket: true }));
    expect(server["connect-src"]).toEqual(["'self'", "ws://127.0.0.1:*", "ws://localhost:*"]);
    expect({ ...server, "connect-src": ["'self'"] }).toEqual(d);
  });

  it("loads only the app's own pages (offline)", () => {
    expect(allowedUrl(`${APP_ORIGIN}/index.html`)).toBe(true);
    expect(allowedUrl(`${APP_ORIGIN}/ts.worker.js`)).toBe(true);
    for (const url of [
      "https://cdn.jsdelivr.net/npm/monaco-editor",
      "http://127.0.0.1:8080/",
      "file:///etc/passwd",
      "basin://other/x",
      "ws://127.0.0.1:1/",
    ])
      expect(allowedUrl(url), url).toBe(false);
  });

  it("main.ts builds its window from windowOptions() and serves pages with the desktop CSP", () => {
    const main = readFileSync(join(ROOT, "electron/main.ts"), "utf8");
    expect(main).toMatch(/new BrowserWindow\(windowOptions\(PRELOAD\)\)/);
    expect(main).toMatch(/"content-security-policy": DESKTOP_CSP/);
    expect(main).toMatch(/onBeforeRequest\([^)]*\) =>\s*callback\(\{ cancel: !allowedUrl/);
    expect(main).toMatch(/setWindowOpenHandler\(\(\) => \(\{ action: "deny" \}\)\)/);
  });

  it("packages AppImage and deb with the native addon unpacked from asar", () => {
    const yml = readFileSync(join(ROOT, "electron-builder.yml"), "utf8");
    expect(yml).toMatch(/target: \[AppImage, deb\]/);
    expect(yml).toMatch(/asarUnpack:\n(\s+- .*\n)*\s+- native\/build\/Release\/basin\.node/);
    expect(yml).toMatch(/files:\n(\s+- .*\n)*\s+- dist\/\*\*/);
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).main).toBe("dist/electron/main.js");
  });

  it("electron-builder itself loads electron-builder.yml and finds it valid against its schema (a misspelt key is refused)", async () => {
    // electron-builder's own loader and validator (app-builder-lib, found from electron-builder as it finds it).
    const fromBuilder = createRequire(createRequire(join(ROOT, "package.json")).resolve("electron-builder"));
    type Config = Record<string, unknown> & { linux: Record<string, unknown> };
    const { getConfig, validateConfiguration } = fromBuilder("app-builder-lib/out/util/config/config.js") as {
      getConfig(dir: string, file: null, extra: null): Promise<Config>;
      validateConfiguration(c: Config, log: unknown): Promise<void>;
    };
    const { DebugLogger } = createRequire(fromBuilder.resolve("app-builder-lib"))("builder-util") as {
      DebugLogger: new (enabled: boolean) => unknown;
    };
    const config = await getConfig(ROOT, null, null);
    expect(config.linux.target).toEqual(["AppImage", "deb"]);
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
    await expect(
      validateConfiguration({ ...config, linux: { ...config.linux, tagret: ["deb"] } }, new DebugLogger(false)),
    ).rejects.toThrow(/does not match the API schema/);
  });
});

describe("renderer transport", () => {
  const location = { host: "127.0.0.1:8123", search: "?token=a%2Bb" };

  it("uses the WebSocket with the page's token in a browser, the port where the preload exposed window.basin", () => {
    expect(chooseTransport({ location })).toEqual({ kind: "ws", url: "ws://127.0.0.1:8123/?token=a%2Bb" });
    expect(chooseTransport({ location: { host: "localhost:1", search: "" } })).toEqual({
      kind: "ws",
      url: "ws://localhost:1/?token=",
    });
    expect(chooseTransport({ location, basin: { connect: "not a function" } }).kind).toBe("ws");
    const bridge = { connect: () => {} };
    expect(chooseTransport({ location, basin: bridge })).toEqual({ kind: "port", bridge });
  });

  it("keeps the page's token in the tab's sessionStorage, so a reload (address bar cleaned) still connects", () => {
    const stored = new Map<string, string>();
    const sessionStorage = {
      getItem: (k: string) => stored.get(k) ?? null,
      setItem: (k: string, v: string) => void stored.set(k, v),
    };
    expect(chooseTransport({ location, sessionStorage })).toEqual({
      kind: "ws",
      url: "ws://127.0.0.1:8123/?token=a%2Bb",
    });
    const reloaded = { host: "127.0.0.1:8123", search: "" };
    expect(chooseTransport({ location: reloaded, sessionStorage })).toEqual({
      kind: "ws",
      url: "ws://127.0.0.1:8123/?token=a%2Bb",
    });
  });

  it("takes the desktop port only from the window's own message, then talks over it", async () => {
    type Listener = Parameters<MessageTarget["addEventListener"]>[1];
    const listeners = new Set<Listener>();
    const channel = new MessageChannel();
    const page = {
      location,
      addEventListener: (_t: "message", l: Listener) => listeners.add(l),
      removeEventListener: (_t: "message", l: Listener) => listeners.delete(l),
      basin: {
        // What preload.ts does when the main process sends the port: post it to the window.
        connect: () =>
          setTimeout(() => {
            for (const l of [...listeners])
              l({ source: {}, data: PORT_MESSAGE, ports: [channel.port2 as unknown as PortLike] }); // another frame: ignored
            for (const l of [...listeners]) l({ source: page, data: "something else", ports: [] });
            for (const l of [...listeners])
              l({ source: page, data: PORT_MESSAGE, ports: [channel.port1 as unknown as PortLike] });
          }, 5),
      },
    };
    const port = await receiveBridgePort(page, page.basin);
    expect(port).toBe(channel.port1);
    expect(listeners.size).toBe(0);

    // createClient on such a page: a PortEngineClient whose requests go out on the port.
    const other = new MessageChannel();
    let sent: unknown;
    other.port2.onmessage = (e) => {
      sent = e.data;
      other.port2.postMessage({ id: (e.data as { id: number }).id, result: { root: "/w", files: ["a.ts"] } });
    };
    const page2 = {
      ...page,
      basin: {
        connect: () =>
          setTimeout(
            () =>
              [...listeners].forEach((l) =>
                l({ source: page2, data: PORT_MESSAGE, ports: [other.port1 as unknown as PortLike] }),
              ),
            5,
          ),
      },
    };
    const client = createClient(page2);
    expect(client).toBeInstanceOf(PortEngineClient);
    try {
      expect(await client.workspace()).toEqual({ root: "/w", files: ["a.ts"] });
      expect(sent).toMatchObject({ method: "workspace", params: [] });
      // The main process reports a crash and, after a restart request, that the engine runs again.
      other.port2.onmessage = (e) => {
        if ((e.data as { control?: string }).control === "restartEngine")
          other.port2.postMessage({ engineProcess: { state: "running" } });
      };
      const states: string[] = [];
      client.onConnection((s) => states.push(s));
      other.port2.postMessage({
        engineProcess: { state: "crashed", message: "The engine process was killed (SIGKILL)." },
      });
      await expect.poll(() => client.state).toBe("crashed");
      expect(client.crashMessage).toMatch(/SIGKILL/);
      client.restartEngine!();
      await expect.poll(() => client.state).toBe("open");
      expect(states).toEqual(["crashed", "connecting", "open"]);
    } finally {
      client.close();
      for (const p of [channel.port1, channel.port2, other.port2]) p.close();
    }
  });
});

describe("npm start", () => {
  const start = join(ROOT, "scripts/start_electron.mjs");

  it("says to use `npx basin serve` when no Electron binary is installed", () => {
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start).toBe(
      "node scripts/build.mjs && node scripts/start_electron.mjs",
    );
    // Without BASIN_ELECTRON the `electron` package decides; here (and in CI) it is not installed.
    const envs = existsSync(join(ROOT, "node_modules/electron"))
      ? [{ BASIN_ELECTRON: "/nonexistent/electron" }]
      : [{}, { BASIN_ELECTRON: "/nonexistent/electron" }];
    for (const env of envs) {
      const r = spawnSync(process.execPath, [start], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, ...env },
        encoding: "utf8",
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        /Basin desktop cannot start: (the `electron` package is not installed|BASIN_ELECTRON=\/nonexistent\/electron does not exist)/,
      );
      expect(r.stderr).toContain("npx basin serve [folder]");
      expect(r.stderr).toContain("npm install electron");
      expect(r.stderr).toContain("BASIN_ELECTRON=/path/to/electron");
    }
  });

  it("declares Electron as an optional dependency (npm install succeeds where its binary cannot be downloaded) and electron-builder for packages", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.optionalDependencies.electron).toMatch(/^\^\d+/);
    expect(pkg.dependencies.electron ?? pkg.devDependencies.electron).toBeUndefined();
    expect(pkg.devDependencies["electron-builder"]).toMatch(/^\^\d+/);
    const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
    expect(lock.packages["node_modules/electron"].optional).toBe(true);
    expect(lock.packages["node_modules/electron-builder"]).toBeDefined();
    // Packaging lists what runs the engine outside the archive.
    expect(readFileSync(join(ROOT, "electron-builder.yml"), "utf8")).toMatch(/target: \[AppImage, deb\]/);
  });

  it("starts the Electron binary on dist/electron/main.js with the folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "basin-fake-electron-"));
    try {
      const fake = join(dir, "electron");
      writeFileSync(fake, `#!/bin/sh\necho "electron $*"\nexit 3\n`);
      chmodSync(fake, 0o755);
      const r = spawnSync(process.execPath, [start, "my-folder"], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, BASIN_ELECTRON: fake },
        encoding: "utf8",
      });
      expect(r.stdout.trim()).toBe(`electron ${join(ROOT, "dist/electron/main.js")} my-folder`);
      expect(r.status).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("builds the preload script as one CommonJS file that only requires electron", () => {
    const preload = readFileSync(join(ROOT, "dist/electron/preload.cjs"), "utf8");
    expect([...preload.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1])).toEqual(["electron"]);
    expect(preload).toContain(`exposeInMainWorld("basin"`);
    expect(preload).toContain(JSON.stringify(PORT_MESSAGE));
  });
});

// The desktop shell (Electron main process), thin glue around the same workbench
// `basin serve` shows in a browser:
// - the engine runs as a separate process (engine/server/engine_process.ts),
//   relayed by EngineHost; when it dies the window shows why, with a Restart
//   button, and stays usable;
// - one window: sandboxed, context-isolated, no Node integration, a strict CSP,
//   pages from the app's own files over basin://app/ and nothing remote (offline);
// - each window gets a MessagePort to the engine through the preload script.
//
//   electron dist/electron/main.js [workspace-folder]     (npm start)
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  MessageChannelMain,
  protocol,
  session,
  type MessagePortMain,
} from "electron";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { assetFile, contentType } from "../engine/server/assets.js";
import { CONNECT_CHANNEL, PORT_CHANNEL } from "./channels.js";
import { EngineHost, type HostPort } from "./engine_host.js";
import { allowedUrl, APP_ORIGIN, DESKTOP_CSP, windowOptions } from "./window_options.js";

const HERE = dirname(fileURLToPath(import.meta.url)); // dist/electron
const RENDERER = resolve(HERE, "../renderer");
const PRELOAD = join(HERE, "preload.cjs");
/** The engine runs from outside the asar archive (electron-builder.yml unpacks it with its modules and the addon). */
const ENGINE = resolve(HERE, "../engine/server/engine_process.js").replace(
  `${sep}app.asar${sep}`,
  `${sep}app.asar.unpacked${sep}`,
);

/** The folder to open: the first argument, $BASIN_WORKSPACE, or the current folder (home when started from "/"). */
function initialWorkspace(): string {
  const arg = process.argv.slice(app.isPackaged ? 1 : 2).find((a) => !a.startsWith("-"));
  if (arg) return resolve(arg);
  if (process.env.BASIN_WORKSPACE) return resolve(process.env.BASIN_WORKSPACE);
  return process.cwd() === "/" ? homedir() : process.cwd();
}

function hostPort(port: MessagePortMain): HostPort {
  return {
    send: (m) => port.postMessage(m),
    onMessage: (l) => port.on("message", (e) => l(e.data)),
    onClose: (l) => port.on("close", l),
    close: () => port.close(),
  };
}

protocol.registerSchemesAsPrivileged([
  { scheme: "basin", privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
]);

let host: EngineHost | undefined;
/** Each window's current port (a reload asks for a new one; the old one is dropped). */
const ports = new Map<number, HostPort>();

function createWindow(): void {
  const win = new BrowserWindow(windowOptions(PRELOAD));
  const id = win.webContents.id;
  win.once("ready-to-show", () => win.show());
  // A crashed or killed page reloads instead of leaving a dead window.
  win.webContents.on("render-process-gone", (_e, details) => {
    if (details.reason !== "clean-exit" && !win.webContents.isDestroyed()) win.webContents.reload();
  });
  win.webContents.on("destroyed", () => {
    const p = ports.get(id);
    if (p) host?.detach(p);
    ports.delete(id);
  });
  void win.loadURL(`${APP_ORIGIN}/index.html`);
}

async function openFolder(): Promise<void> {
  const picked = await dialog.showOpenDialog({
    title: "Open a folder as the workspace",
    properties: ["openDirectory", "createDirectory"],
  });
  if (picked.canceled || !picked.filePaths[0] || !host) return;
  await host.restart(picked.filePaths[0]);
  for (const w of BrowserWindow.getAllWindows()) w.webContents.reload();
}

function menu(): Menu {
  return Menu.buildFromTemplate([
    {
      label: "File",
      submenu: [
        { label: "Open Folder…", accelerator: "CmdOrCtrl+O", click: () => void openFolder() },
        { type: "separator" },
        { role: "quit" },
      ],
    },
    {
      label: "View",
      submenu: [
        { role: "reload" },
        { role: "toggleDevTools" },
        { type: "separator" },
        { role: "resetZoom" },
        { role: "zoomIn" },
        { role: "zoomOut" },
        { role: "togglefullscreen" },
      ],
    },
    { label: "Engine", submenu: [{ label: "Restart Engine", click: () => void host?.restart() }] },
  ]);
}

app.on("web-contents-created", (_e, contents) => {
  contents.setWindowOpenHandler(() => ({ action: "deny" }));
  contents.on("will-navigate", (e, url) => {
    if (!allowedUrl(url)) e.preventDefault();
  });
});

app.on("window-all-closed", () => {
  void (host?.close() ?? Promise.resolve()).finally(() => app.quit());
});

void app.whenReady().then(() => {
  protocol.handle("basin", (request) => {
    const url = new URL(request.url);
    const file = url.host === "app" ? assetFile(RENDERER, url.pathname) : undefined;
    if (!file)
      return new Response(`Basin: not found (${url.pathname}); is the workbench built? run \`npm run build\``, {
        status: 404,
        headers: { "content-type": "text/plain; charset=utf-8" },
      });
    return new Response(readFileSync(file), {
      headers: {
        "content-type": contentType(file),
        "content-security-policy": DESKTOP_CSP,
        "x-content-type-options": "nosniff",
        "cache-control": "no-store",
      },
    });
  });
  // Offline by construction: nothing but the app's own pages loads.
  session.defaultSession.webRequest.onBeforeRequest((details, callback) =>
    callback({ cancel: !allowedUrl(details.url) }),
  );
  session.defaultSession.setPermissionRequestHandler((_wc, permission, callback) =>
    callback(permission === "clipboard-sanitized-write"),
  );

  host = new EngineHost({ script: ENGINE, root: initialWorkspace() });
  ipcMain.on(CONNECT_CHANNEL, (event) => {
    const id = event.sender.id;
    const old = ports.get(id);
    if (old) host?.detach(old);
    const { port1, port2 } = new MessageChannelMain();
    const p = hostPort(port1);
    ports.set(id, p);
    host?.attach(p);
    port1.start();
    event.sender.postMessage(PORT_CHANNEL, null, [port2]);
  });
  Menu.setApplicationMenu(menu());
  createWindow();
  app.on("activate", () => {
    if (BrowserWindow.getAllWindows().length === 0) createWindow();
  });
});

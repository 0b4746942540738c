// The desktop window's security settings, kept apart from main.ts (which needs
// Electron) so a test can check them: the page gets no Node, runs sandboxed in
// its own JavaScript world, and loads nothing but the app's own files.
import type { BrowserWindowConstructorOptions } from "electron";
import { contentSecurityPolicy } from "../engine/server/csp.js";

/** The app's pages are served from here (a privileged custom scheme, not file://). */
export const APP_ORIGIN = "basin://app";

/** The desktop CSP: the browser server's, without its WebSocket (the window talks over a MessagePort). */
export const DESKTOP_CSP = contentSecurityPolicy({ websocket: false });

/**
 * @example
 * new BrowserWindow(windowOptions("/app/dist/electron/preload.cjs"))
 */
export function windowOptions(preload: string): BrowserWindowConstructorOptions {
  return {
    width: 1440,
    height: 920,
    minWidth: 720,
    minHeight: 480,
    title: "Basin",
    show: false,
    backgroundColor: "#1b1d23",
    autoHideMenuBar: true,
    webPreferences: {
      preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  };
}

/** Whether the window may load `url`: the app's own pages, and devtools. Everything remote is refused (the app works offline). */
export function allowedUrl(url: string): boolean {
  return (
    url.startsWith(`${APP_ORIGIN}/`) ||
    url.startsWith("devtools://") ||
    url.startsWith("data:") ||
    url.startsWith("blob:")
  );
}

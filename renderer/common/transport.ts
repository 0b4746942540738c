// Which transport the workbench uses: inside the desktop app the preload script
// exposes window.basin (a MessagePort to the engine process); in a browser the
// page talks to `basin serve` over a WebSocket with the token from its URL, kept in
// the tab's sessionStorage for reloads (the address bar drops it; no cookie holds it).
import { PortEngineClient, type PortLike } from "./port_client.js";
import type { WorkbenchClient } from "./rpc_client.js";
import { WsEngineClient } from "./ws_client.js";

/** What electron/preload.ts exposes as window.basin. */
export interface DesktopBridge {
  /** Asks the main process for a port; it arrives as a window "message" whose data is PORT_MESSAGE. */
  connect(): void;
}

/** The window message that carries the desktop port (in its `ports`). */
export const PORT_MESSAGE = "basin:engine-port";

export type Transport = { kind: "port"; bridge: DesktopBridge } | { kind: "ws"; url: string };

/** The part of `window` the choice looks at. */
export interface PageLike {
  basin?: unknown;
  location: { host: string; search: string };
  sessionStorage?: { getItem(k: string): string | null; setItem(k: string, v: string): void };
}

const TOKEN_KEY = "basin.token";

function isBridge(b: unknown): b is DesktopBridge {
  return typeof b === "object" && b !== null && typeof (b as DesktopBridge).connect === "function";
}

/**
 * @example
 * chooseTransport(window) // { kind: "ws", url: "ws://127.0.0.1:8123/?token=…" } in a browser
 */
export function chooseTransport(page: PageLike): Transport {
  if (isBridge(page.basin)) return { kind: "port", bridge: page.basin };
  const given = new URLSearchParams(page.location.search).get("token");
  if (given) page.sessionStorage?.setItem(TOKEN_KEY, given);
  const token = given ?? page.sessionStorage?.getItem(TOKEN_KEY) ?? "";
  return { kind: "ws", url: `ws://${page.location.host}/?token=${encodeURIComponent(token)}` };
}

/** The part of `window` that receives the port. */
export interface MessageTarget {
  addEventListener(
    type: "message",
    listener: (ev: { source?: unknown; data: unknown; ports?: readonly PortLike[] }) => void,
  ): void;
  removeEventListener(
    type: "message",
    listener: (ev: { source?: unknown; data: unknown; ports?: readonly PortLike[] }) => void,
  ): void;
}

/**
 * Asks the bridge for a port and resolves with it when the preload script posts it
 * to this window (only messages from the window itself count).
 *
 * @example
 * const port = await receiveBridgePort(window, window.basin);
 */
export function receiveBridgePort(target: MessageTarget, bridge: DesktopBridge): Promise<PortLike> {
  return new Promise((resolve) => {
    const listener = (ev: { source?: unknown; data: unknown; ports?: readonly PortLike[] }) => {
      if (ev.source !== target || ev.data !== PORT_MESSAGE || !ev.ports?.[0]) return;
      target.removeEventListener("message", listener);
      resolve(ev.ports[0]);
    };
    target.addEventListener("message", listener);
    bridge.connect();
  });
}

/**
 * The client for this page: MessagePort in the desktop app, WebSocket in a browser.
 *
 * @example
 * const client = createClient(window);
 */
export function createClient(page: PageLike & MessageTarget): WorkbenchClient {
  const t = chooseTransport(page);
  return t.kind === "port"
    ? new PortEngineClient(receiveBridgePort(page, t.bridge))
    : new WsEngineClient({ url: t.url });
}

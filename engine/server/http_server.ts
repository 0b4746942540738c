// `basin serve`: the workbench over HTTP + WebSocket on 127.0.0.1. The page's
// assets are the app's code, served to any request that names this host; the
// WebSocket, the only way to data and files, needs the random token printed at start
// (the page keeps it in its sessionStorage, never in a cookie: a cookie for 127.0.0.1
// would go to every local port the browser visits) and the page's Origin, so
// another site open in the browser cannot drive the engine.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import { WebSocketServer, type WebSocket } from "ws";
import type { Cluster } from "../cluster/cluster.js";
import { BasinError } from "../common/errors.js";
import type { EngineClient, EngineEvent } from "../common/rpc.js";
import type { WorkbenchClient } from "../common/rpc_client.js";
import { assetFile, contentType } from "./assets.js";
import { contentSecurityPolicy } from "./csp.js";
import { EngineService, type EngineConnection } from "./engine_service.js";
import { dispatch } from "./rpc_dispatch.js";

export interface ServeOptions {
  /** The workspace folder. */
  root: string;
  /** 0 picks a free port. */
  port?: number;
  /** Default: a fresh random token. */
  token?: string;
  /** The built renderer (index.html and its assets). */
  assets?: string;
  /** Where runs go (default: the process's local cluster); `basin serve --cluster` opens a Dask one. */
  cluster?: Cluster;
  /** How long a page's session (its results, its run) outlives the page; default 60 s. */
  sessionGraceMs?: number;
  /**
   * The workbench drives this engine instead of a local one (a RemoteEngine: Basin on
   * an SSH host): every request goes to it, the workspace's file list, reads and saves
   * included, and its events come back; `root` and `cluster` are unused.
   * The caller closes it.
   */
  remote?: WorkbenchClient;
}

export interface RunningServer {
  url: string;
  port: number;
  token: string;
  /** The local engine, or `remote` when one was given. */
  engine: EngineService | WorkbenchClient;
  close(): Promise<void>;
}

function sameToken(given: string | null | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given),
    b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The renderer's build output, next to the engine in dist/. */
function defaultAssets(): string {
  return resolve(
    new URL(".", import.meta.url).pathname,
    import.meta.url.endsWith(".js") ? "../../renderer" : "../../dist/renderer",
  );
}

/**
 * Starts the workbench server.
 *
 * @example
 * const s = await serve({ root: "." });
 * console.log(`open ${s.url}`);
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const assets = resolve(options.assets ?? defaultAssets());
  // Each socket is one page; its connection knows the session the page attached to.
  const sockets = new Map<WebSocket, EngineConnection | undefined>();
  /** A run's events go to its session's pages; the rest to every page. */
  const broadcast = (event: EngineEvent, session?: string) => {
    const text = JSON.stringify({ event });
    for (const [ws, conn] of sockets) if (session === undefined || conn?.session === session) ws.send(text);
  };
  const { remote } = options;
  const engine =
    remote ??
    new EngineService({
      root: options.root,
      cluster: options.cluster,
      emit: broadcast,
      sessionGraceMs: options.sessionGraceMs,
    });
  const unsubscribe = remote
    ? [
        remote.onEvent(broadcast),
        remote.onConnection((s) => {
          if (s === "closed")
            broadcast({
              type: "log",
              level: "warn",
              text: "the connection to the remote Basin engine dropped; it reconnects by itself, and requests fail until then",
            });
          if (s === "open")
            broadcast({ type: "log", level: "info", text: "connected to the remote Basin engine again" });
        }),
      ]
    : [];
  let origin = "";

  const refuse = (res: ServerResponse, status: number, text: string) => {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
    res.end(`${text}\n`);
  };

  // DNS rebinding: a page of another site whose name now resolves to 127.0.0.1 sends its
  // own name as Host. Any port: an SSH tunnel (RemoteEngine) reaches this one on another.
  const hostOk = (req: IncomingMessage) => /^(127\.0\.0\.1|localhost)(:\d+)?$/.test(req.headers.host ?? "");

  const http = createServer((req, res) => {
    if (!hostOk(req)) return refuse(res, 421, "Basin: this server answers only to 127.0.0.1 and localhost");
    const url = new URL(req.url ?? "/", origin);
    if (req.method !== "GET") return refuse(res, 405, "Basin: only GET is served here");
    // Whether a page's token is this server's: a page whose socket is refused asks, to
    // tell a restarted server (a new token: open its URL) from one that is only slow.
    if (url.pathname === "/token") {
      res.writeHead(sameToken(url.searchParams.get("token"), token) ? 204 : 403, { "cache-control": "no-store" });
      return res.end();
    }
    if (url.pathname === "/favicon.ico") {
      res.writeHead(204, { "cache-control": "max-age=86400" });
      return res.end();
    }
    const file = assetFile(assets, url.pathname);
    if (!file) {
      if (url.pathname === "/" || url.pathname === "/index.html")
        return refuse(
          res,
          500,
          `Basin: the workbench is not built (no ${join(assets, "index.html")}); run \`npm run build\``,
        );
      return refuse(res, 404, "Basin: not found");
    }
    res.writeHead(200, {
      "content-type": contentType(file),
      "content-security-policy": contentSecurityPolicy({ websocket: true }),
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      // The page's address holds the token until the page removes it: never send it on.
      "referrer-policy": "no-referrer",
    });
    res.end(readFileSync(join(file)));
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 * 1024 });
  http.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", origin);
    const allowed = [origin, origin.replace("127.0.0.1", "localhost")];
    const okToken = sameToken(url.searchParams.get("token"), token);
    if (!okToken || !allowed.includes(req.headers.origin ?? "") || !hostOk(req)) {
      const why = !okToken ? "token missing or wrong" : !hostOk(req) ? "wrong Host" : "wrong Origin";
      socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\n\r\nBasin: ${why}\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = engine instanceof EngineService ? engine.connection() : undefined;
      sockets.set(ws, conn);
      ws.on("close", () => (sockets.delete(ws), conn?.close()));
      // A frame the socket refuses (over maxPayload, invalid UTF-8) ends that connection
      // only (ws closes it; the page reconnects), never the server.
      ws.on("error", (e) => console.error(`basin serve: a workbench connection was closed: ${e.message}`));
      ws.on("message", (data) => void answer(conn ?? engine, ws, String(data)));
    });
  });

  await new Promise<void>((ok, fail) => {
    http.once("error", (e: NodeJS.ErrnoException) =>
      fail(
        e.code === "EADDRINUSE"
          ? new BasinError(
              "BASIN_IO",
              `port ${options.port} on 127.0.0.1 is already in use; pick another with --port, or leave it out for a free one`,
            )
          : e,
      ),
    );
    http.listen(options.port ?? 0, "127.0.0.1", () => ok());
  });
  const port = (http.address() as { port: number }).port;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    port,
    token,
    engine,
    async close() {
      for (const ws of sockets.keys()) ws.terminate();
      wss.close();
      await new Promise<void>((ok) => http.close(() => ok()));
      for (const off of unsubscribe) off();
      if (!remote) await engine.close();
    },
  };
}

/** Answers one request message; every failure goes back as a serialized error. */
async function answer(engine: EngineClient, ws: WebSocket, text: string): Promise<void> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    message = undefined; // dispatch answers it as a bad request
  }
  const reply = await dispatch(engine, message);
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(reply));
}

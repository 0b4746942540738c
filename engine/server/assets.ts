// The workbench's built files (dist/renderer) as both shells serve them: the
// browser server over HTTP, the desktop window over its basin:// scheme. Only
// files inside the folder are served.
import { existsSync, statSync } from "node:fs";
import { extname, resolve, sep } from "node:path";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
};

/**
 * The file a URL path names inside `assets` ("/" is index.html), or undefined when
 * there is none or the path leads outside.
 *
 * @example
 * assetFile("/app/dist/renderer", "/app.js") // "/app/dist/renderer/app.js"
 */
export function assetFile(assets: string, pathname: string): string | undefined {
  const root = resolve(assets);
  let rel: string;
  try {
    rel = pathname === "/" || pathname === "" ? "index.html" : decodeURIComponent(pathname.replace(/^\/+/, ""));
  } catch {
    return undefined; // malformed %-escape
  }
  const file = resolve(root, rel);
  if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) return undefined;
  return file;
}

/** The Content-Type for a served file. */
export function contentType(file: string): string {
  return TYPES[extname(file)] ?? "application/octet-stream";
}

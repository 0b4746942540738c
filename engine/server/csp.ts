// The workbench page's Content-Security-Policy, one definition for the browser
// server and the desktop window: the app's own scripts only (no inline script, no
// eval), no remote anything — the app works offline.

/**
 * @example
 * contentSecurityPolicy({ websocket: true }) // "default-src 'self'; … connect-src 'self' ws://127.0.0.1:* …"
 */
export function contentSecurityPolicy(options: { websocket: boolean }): string {
  const connect = options.websocket ? "connect-src 'self' ws://127.0.0.1:* ws://localhost:*" : "connect-src 'self'";
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    connect,
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
    "form-action 'none'",
  ].join("; ");
}

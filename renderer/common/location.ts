// Error locations from the engine ("path/to/file.ts:12:5") matched to workspace files.

export interface ParsedLocation {
  file: string;
  line: number;
  column: number;
}

/**
 * @example
 * parseLocation("/w/taxi.ts:4:12") // { file: "/w/taxi.ts", line: 4, column: 12 }
 */
export function parseLocation(location: string | undefined): ParsedLocation | undefined {
  if (!location) return undefined;
  const m = /^(.*?):(\d+)(?::(\d+))?$/.exec(location);
  if (!m) return { file: location, line: 1, column: 1 };
  return { file: m[1], line: Number(m[2]), column: Number(m[3] ?? 1) };
}

/**
 * The workspace file (relative path) that an engine location names: the engine
 * prints paths relative to its working folder or absolute, so match by suffix.
 *
 * @example
 * workspaceFileOf("/home/me/w/pipes/taxi.ts", ["pipes/taxi.ts", "b.ts"]) // "pipes/taxi.ts"
 */
export function workspaceFileOf(file: string, files: readonly string[]): string | undefined {
  const norm = file.replace(/\\/g, "/");
  let best: string | undefined;
  for (const f of files) {
    if (f.endsWith("/")) continue;
    if (norm === f || norm.endsWith(`/${f}`)) if (!best || f.length > best.length) best = f;
  }
  return best;
}

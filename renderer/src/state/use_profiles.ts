// A result's column profiles, fetched one column at a time after its first rows
// (never ahead of them), then the distinct counts the profiles left out (numbers
// with many values, which take longest): the summary panel and the table's header
// badges read the same profiles.
import { useEffect, useState } from "react";
import type { ColumnProfile, EngineClient, ResultInfo } from "../../../engine/common/rpc.js";

export type ProfileState = ColumnProfile | "loading" | undefined;

export interface Profiles {
  byColumn: Record<string, ProfileState>;
  /** Columns whose distinct count is still being counted. */
  counting: ReadonlySet<string>;
}

/** How long the first page has to itself before profiling starts (ms). */
const FIRST_PAGE_HEAD_START = 50;
/** How often profiles that arrived are shown (ms). */
const PROFILE_BATCH_MS = 100;

/**
 * @example
 * const { byColumn, counting } = useProfiles(client, result);
 * byColumn["fare"] // "loading", then { mean, median, histogram, … }
 */
export function useProfiles(client: EngineClient, result: ResultInfo | undefined, enabled = true): Profiles {
  const [byColumn, setByColumn] = useState<Record<string, ProfileState>>({});
  const [counting, setCounting] = useState<ReadonlySet<string>>(new Set());
  useEffect(() => {
    let stale = false;
    setByColumn({});
    setCounting(new Set());
    if (!result || !enabled || result.kind === "bag") return;
    // Profiles arrive about a millisecond apart: shown in batches, so that a result of
    // hundreds of columns is not hundreds of renders of every card (the page stalled).
    let pending: Record<string, ProfileState> = {};
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      timer = undefined;
      const next = pending;
      pending = {};
      if (!stale) setByColumn((p) => ({ ...p, ...next }));
    };
    const put = (column: string, state: ProfileState) => {
      pending[column] = state;
      timer ??= setTimeout(flush, PROFILE_BATCH_MS);
    };
    void (async () => {
      await new Promise((r) => setTimeout(r, FIRST_PAGE_HEAD_START));
      if (stale) return;
      setByColumn(Object.fromEntries(result.schema.map((f) => [f.name, "loading" as const])));
      const done: ColumnProfile[] = [];
      for (const f of result.schema) {
        if (stale) return;
        try {
          const prof = await client.profile(result.id, f.name);
          if (stale) return;
          done.push(prof);
          put(f.name, prof);
        } catch {
          // This column has no profile; the others still get theirs (a released result
          // fails each at once, and a newer run marks this loop stale).
          put(f.name, undefined);
        }
      }
      clearTimeout(timer);
      flush();
      const left = done.filter((p) => p.distinct === undefined).map((p) => p.column);
      setCounting(new Set(left));
      for (const column of left) {
        if (stale) return;
        try {
          const distinct = await client.countDistinct(result.id, column);
          if (stale) return;
          setByColumn((p) => {
            const prof = p[column];
            return typeof prof === "object" ? { ...p, [column]: { ...prof, distinct } } : p;
          });
        } catch {
          if (!stale) setCounting(new Set());
          return;
        }
        setCounting((c) => new Set([...c].filter((x) => x !== column)));
      }
    })();
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [client, result, enabled]);
  return { byColumn, counting };
}

// A bag result: its first items as pretty-printed JSON, more on request. The items
// come from the engine as pages of the result's "item" column (JSON text).
import { useEffect, useRef, useState } from "react";
import type { EngineClient, ResultInfo } from "../../engine/common/rpc.js";
import { BAG_PREVIEW_ITEMS, bagItemViews, type BagItemView } from "../common/bag_items.js";

export interface BagViewProps {
  client: EngineClient;
  result: ResultInfo;
  onError(message: string): void;
}

export function BagView({ client, result, onError }: BagViewProps) {
  const [items, setItems] = useState<BagItemView[]>([]);
  const [limit, setLimit] = useState(BAG_PREVIEW_ITEMS);
  const report = useRef(onError); // the parent's callback may change every render; fetching must not
  report.current = onError;
  useEffect(() => setLimit(BAG_PREVIEW_ITEMS), [result.id]);
  useEffect(() => {
    let live = true;
    client
      .page(result.id, 0, Math.min(limit, result.rows), ["item"])
      .then((p) => live && setItems(bagItemViews(p.values[0] ?? [], p.offset)))
      .catch((e: unknown) => live && report.current(`bag items: ${(e as Error).message}`));
    return () => {
      live = false;
    };
  }, [client, result.id, result.rows, limit]);
  return (
    <div className="bag-view" data-result-kind="bag">
      <div className="bag-status">
        Bag of {result.rows.toLocaleString("en-US")} items
        {result.rows > items.length ? `, first ${items.length} shown` : ""}
      </div>
      <ol className="bag-items">
        {items.map((it) => (
          <li key={it.index} className="bag-item" data-index={it.index}>
            <pre>{it.text}</pre>
          </li>
        ))}
      </ol>
      {result.rows > items.length && items.length === limit ? (
        <button className="bag-more" onClick={() => setLimit((n) => n + BAG_PREVIEW_ITEMS)}>
          Show {Math.min(BAG_PREVIEW_ITEMS, result.rows - items.length)} more
        </button>
      ) : null}
    </div>
  );
}

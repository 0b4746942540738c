// How the workbench shows a bag result's items: each item's JSON text (as the engine
// pages it, column "item") pretty-printed, long items cut with a note.

/** Items shown at first; the view offers more in steps of this. */
export const BAG_PREVIEW_ITEMS = 100;
/** Characters of one pretty-printed item before it is cut. */
export const BAG_ITEM_MAX_CHARS = 4000;

export interface BagItemView {
  index: number;
  text: string;
  cut: boolean;
}

/**
 * Pretty-printed items from their JSON text, numbered from `offset`.
 *
 * @example
 * bagItemViews(['{"a":1}'], 0) // [{ index: 0, text: '{\n  "a": 1\n}', cut: false }]
 */
export function bagItemViews(texts: readonly unknown[], offset: number, maxChars = BAG_ITEM_MAX_CHARS): BagItemView[] {
  return texts.map((t, i) => {
    let text: string;
    try {
      text = JSON.stringify(JSON.parse(String(t)), null, 2);
    } catch {
      text = String(t); // not JSON (never from the engine): shown as it is
    }
    const cut = text.length > maxChars;
    return { index: offset + i, text: cut ? `${text.slice(0, maxChars)}…` : text, cut };
  });
}

// Browsers cap an element's height (Chrome near 33.5 million px), so a table of
// millions of rows cannot be one tall element. The scroller gets at most
// MAX_SCROLL_PX of content and its scroll offset maps linearly onto the virtual one.

export const MAX_SCROLL_PX = 8_000_000;

/**
 * The height of the element that makes the scroller scroll, for `virtual` px of content.
 *
 * @example
 * scrollHeightFor(240_000_000) // 8_000_000
 */
export function scrollHeightFor(virtual: number, max = MAX_SCROLL_PX): number {
  return Math.min(virtual, max);
}

/**
 * Virtual px per real px scrolled: maps [0, real max] onto [0, virtual max] so the
 * first and the last row are both reachable; 1 when the content fits.
 *
 * @example
 * scrollRatio(240_000_000, 8_000_000, 600) // ≈ 30
 */
export function scrollRatio(virtual: number, real: number, viewport: number): number {
  const realMax = real - viewport,
    virtualMax = virtual - viewport;
  return realMax > 0 && virtualMax > realMax ? virtualMax / realMax : 1;
}

/** Where a scroller stands: its real scroll offset and height, the rows' virtual px per real px, and the sticky header over its top. */
export interface ScrollView {
  scrollTop: number;
  clientHeight: number;
  ratio: number;
  head: number;
}

/**
 * The real scrollTop that brings the row at virtual `top` (of `height` px) into view
 * below the header, moving as little as possible; undefined when it is in view. With
 * a ratio above 1 a real px moves `ratio` virtual px, so the offset is rounded toward
 * keeping the row inside (a virtualizer's own scrollToIndex clamps the virtual offset
 * to the real height: past 8,000,000 / 24 = 333,333 rows it stopped there).
 *
 * @example
 * revealTop(24 * 9_999_999 + 78, 24, { scrollTop: 0, clientHeight: 600, ratio: 30, head: 78 }) // 7_999_983
 */
export function revealTop(top: number, height: number, v: ScrollView): number | undefined {
  const offset = v.scrollTop * v.ratio;
  if (top - v.head < offset) return Math.max(0, Math.floor((top - v.head) / v.ratio));
  if (top + height > offset + v.clientHeight) return Math.ceil((top + height - v.clientHeight) / v.ratio);
  return undefined;
}

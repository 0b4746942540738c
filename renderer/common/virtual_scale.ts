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

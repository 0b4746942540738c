// Measuring text for layout (column widths, axis sizes) with one shared canvas.

let measurer: CanvasRenderingContext2D | null | undefined;

/**
 * The width of `text` in `font`, in px; `charWidth` px a character where no canvas
 * is available (outside a browser).
 *
 * @example
 * textWidth("Zürich", "12px ui-monospace, monospace") // ≈ 43
 */
export function textWidth(text: string, font: string, charWidth = 8): number {
  measurer ??= document.createElement("canvas").getContext("2d");
  if (!measurer) return text.length * charWidth;
  measurer.font = font;
  return measurer.measureText(text).width;
}

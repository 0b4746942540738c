// Copying text from the workbench: the clipboard API, or a hidden textarea where it
// is not allowed (plain http).

/**
 * @example
 * await copyText("a\tb\n1\t2");
 */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = document.createElement("textarea");
    ta.value = text;
    document.body.append(ta);
    ta.select();
    document.execCommand("copy");
    ta.remove();
  }
}

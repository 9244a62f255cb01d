// A barcode scanner types like a keyboard: a burst of four or more characters, each
// under 50 ms after the one before, ending in Enter. DESIGN §15: a burst is a scan
// wherever the focus is and never text typed into a field.
//
// To keep a scan out of the focused field, printable keys are held back (in the
// capture phase, before the field sees them) while they might be the start of a
// burst. When the next key comes later than GAP ms, the held keys were typing: they
// are put into the field they were aimed at, as if typed (an input event). When
// Enter ends a burst of MIN keys or more, the held keys are a scan.

export const GAP = 50;
export const MIN = 4;

export function listen(onScan, { target = window, gap = GAP, min = MIN } = {}) {
  let held = []; // {key, at, el}
  let timer = null;

  function release() {
    clearTimeout(timer);
    timer = null;
    const keys = held;
    held = [];
    // Typing: each held key goes to the field it was aimed at.
    for (const k of keys) insert(k.el, k.key);
  }

  function onKey(e) {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const now = performance.now();
    const last = held.length ? held[held.length - 1].at : null;
    if (last !== null && now - last > gap) release();
    if (e.key === "Enter") {
      if (held.length >= min) {
        e.preventDefault();
        e.stopImmediatePropagation();
        clearTimeout(timer);
        const code = held.map((k) => k.key).join("");
        held = [];
        onScan(code);
        return;
      }
      release(); // a short burst and Enter: the keys, then Enter as usual
      return;
    }
    // Space is not held: it presses buttons, and barcodes carry none.
    if (e.key.length !== 1 || e.key === " ") {
      release();
      return;
    }
    e.preventDefault();
    e.stopImmediatePropagation();
    held.push({ key: e.key, at: now, el: document.activeElement });
    clearTimeout(timer);
    timer = setTimeout(release, gap + 1);
  }

  target.addEventListener("keydown", onKey, true);
  return () => target.removeEventListener("keydown", onKey, true);
}

// Put text into a field as typing would, and tell its listeners.
function insert(el, text) {
  if (!el || !(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) || el.readOnly || el.disabled) {
    // A key aimed at no field (a shortcut letter, a button): dispatch it again so
    // shortcuts still work.
    (el || document.body).dispatchEvent(new CustomEvent("heldkey", { bubbles: true, detail: text }));
    return;
  }
  try {
    const start = el.selectionStart ?? el.value.length;
    const end = el.selectionEnd ?? el.value.length;
    el.setRangeText(text, start, end, "end");
  } catch {
    el.value += text; // types without a selection (email, number)
  }
  el.dispatchEvent(new Event("input", { bubbles: true }));
}

// The receipt's QR code: the invoice number, so that a return at any register scans
// it back. The encoding is qrcode-generator 2.0.4 (MIT, vendored unchanged in
// vendor/, with its licence); this wrapper only draws its modules as one SVG path,
// built with DOM calls (the register's CSP allows no inline markup or styles).

import qrcode from "./vendor/qrcode-generator.js";

const SVG = "http://www.w3.org/2000/svg";
const QUIET = 4; // modules of white around the code, as the standard asks

// The code's modules, row by row (true: dark). Error correction M, byte mode, the
// smallest version that holds the text.
export function qrMatrix(text) {
  const qr = qrcode(0, "M");
  qr.addData(String(text), "Byte");
  qr.make();
  const n = qr.getModuleCount();
  const rows = [];
  for (let r = 0; r < n; r++) {
    const row = [];
    for (let c = 0; c < n; c++) row.push(qr.isDark(r, c));
    rows.push(row);
  }
  return rows;
}

// An <svg> element of the code, a module per user unit (scaled by CSS).
export function qrSvg(text) {
  const m = qrMatrix(text);
  const size = m.length + 2 * QUIET;
  const d = [];
  m.forEach((row, r) => row.forEach((dark, c) => dark && d.push(`M${c + QUIET} ${r + QUIET}h1v1h-1z`)));
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${size} ${size}`);
  svg.setAttribute("class", "qr-code");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `QR code ${text}`);
  svg.setAttribute("shape-rendering", "crispEdges");
  svg.dataset.text = String(text);
  const bg = document.createElementNS(SVG, "rect");
  bg.setAttribute("width", String(size));
  bg.setAttribute("height", String(size));
  bg.setAttribute("fill", "#fff");
  const path = document.createElementNS(SVG, "path");
  path.setAttribute("d", d.join(""));
  path.setAttribute("fill", "#000");
  svg.append(bg, path);
  return svg;
}

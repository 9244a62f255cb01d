// The receipt's code of the invoice number. A QR encoder is not shipped yet: the
// receipt prints the number as text, which a return types or a scanner reads from
// the barcode the caller may add later.
export function qrSvg(_text) {
  throw new Error("no QR encoder");
}

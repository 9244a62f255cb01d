// Gift cards at the register (DESIGN §18): the card's balance lives on the server,
// so spending one is checked there first and never happens offline; selling or
// loading one goes through the write queue like a sale. A new card's code is in
// the server's first answer only: the register prints it once, then keeps no more
// of it than the last four (what the server's own lists show).

// The server's code alphabet (giftcards/codes.py): RFC 4648 base32, 16 characters.
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const LENGTH = 16;

// The tender that spends a card: the mode coded gift-card, posting to 21300.
export function isGiftMode(mode) {
  return !!mode && (mode.code === "gift-card" || mode.account_code === "21300");
}

// The code as the server stores it, or null when the text cannot be one (so a
// typo is said at once, without spending one of the server's guessing allowance).
// Dashes, spaces and lower case are accepted, as on the server.
export function normalize(text) {
  const code = String(text || "")
    .toUpperCase()
    .replace(/[-\s]/g, "");
  if (code.length !== LENGTH || [...code].some((ch) => !ALPHABET.includes(ch))) return null;
  return code;
}

export const last4 = (code) => String(code).replace(/-/g, "").slice(-4);

// What the receipt and the screen show of a card: never the whole code.
export const label = (four) => `Gift card ••••${four}`;

// A card's answer as the device keeps it once printed: the code masked as the
// server masks it (codes.masked), the last four kept for the history.
export function stripAnswer(answer) {
  const data = answer && answer.data;
  if (!data || !data.code_in_full) return answer;
  return { ...answer, data: { ...data, code: "****-****-****-" + last4(data.code), code_in_full: false } };
}

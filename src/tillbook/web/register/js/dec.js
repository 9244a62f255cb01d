// Decimal amounts as BigInt integers at a fixed scale: no float ever holds money.
// A "scaled" value is {v: BigInt, s: scale}; most callers use the helpers with an
// explicit scale (2 for money, 4 for prices, quantities and rates).

const TEN = 10n;

export function pow10(n) {
  let r = 1n;
  for (let i = 0; i < n; i++) r *= TEN;
  return r;
}

// Parse "12.5", 12.5, "-0.0001" into a BigInt at `scale` places. Refuses (throws)
// more places than the scale: DESIGN §3 says more decimals than stored is an error,
// not a silent rounding.
export function parse(value, scale) {
  if (typeof value === "bigint") return value * pow10(scale);
  let text = typeof value === "number" ? numberText(value) : String(value ?? "").trim();
  if (text === "") throw new Error("empty number");
  let sign = 1n;
  if (text[0] === "-" || text[0] === "+") {
    if (text[0] === "-") sign = -1n;
    text = text.slice(1);
  }
  if (!/^(\d+\.?\d*|\.\d+)$/.test(text)) throw new Error(`not a number: ${value}`);
  let [whole, frac = ""] = text.split(".");
  frac = frac.replace(/0+$/, "");
  if (frac.length > scale) throw new Error(`${value} has more than ${scale} decimal places`);
  return sign * (BigInt(whole || "0") * pow10(scale) + BigInt((frac + "0".repeat(scale)).slice(0, scale) || "0"));
}

// Like parse but answers null for what is not a number within the scale.
export function tryParse(value, scale) {
  try {
    return parse(value, scale);
  } catch {
    return null;
  }
}

function numberText(n) {
  if (!Number.isFinite(n)) throw new Error("not a finite number");
  const t = String(n);
  if (!/e/i.test(t)) return t;
  // 1e-7 and the like: JSON numbers the API sends have at most 4 places.
  return n.toFixed(10).replace(/0+$/, "").replace(/\.$/, "");
}

// Round num/den half up (away from zero on a tie), as Python's ROUND_HALF_UP.
export function divRound(num, den) {
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  if (num < 0n) return -divRound(-num, den);
  return (2n * num + den) / (2n * den);
}

// A scaled BigInt as text with exactly `scale` places ("12.50").
export function format(v, scale) {
  const neg = v < 0n;
  let a = neg ? -v : v;
  const p = pow10(scale);
  const whole = a / p;
  const frac = scale ? "." + String(a % p).padStart(scale, "0") : "";
  return (neg ? "-" : "") + String(whole) + frac;
}

// Shortest text: "3.5" for 3.5000, "2" for 2.0000 (prices and quantities on the wire).
export function plain(v, scale) {
  const t = format(v, scale);
  return scale ? t.replace(/\.?0+$/, "") : t;
}

export const money = (v) => format(v, 2);

// Money as a shop reads it: grouped, two places, in the company's format
// ("1,234.56", "1.234,56", "1 234,56").
export function moneyText(v, fmt = "1,234.56") {
  const t = format(v, 2);
  const neg = t.startsWith("-");
  const [whole, frac] = (neg ? t.slice(1) : t).split(".");
  const groups = fmt === "1.234,56" ? [".", ","] : fmt === "1 234,56" ? ["\u00a0", ","] : [",", "."];
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, groups[0]);
  return (neg ? "-" : "") + grouped + groups[1] + frac;
}

/**
 * Decimal text to the nearest f64, correctly rounded (ties to even). AssemblyScript's own `parseFloat`
 * is not: it misplaces the exponent of some 16–17 digit numbers between 1e38 and 1e53 (it reads
 * "9.170647750513991e+49" as 9.17064775051399e+37) and is one unit off on others.
 *
 * Clinger's fast path when it is exact (at most 2^53 and |exponent| <= 22); otherwise his AlgorithmR:
 * start from an estimate and step one float at a time, deciding each step with exact big-integer arithmetic.
 */

/** Parses the text of a JSON number (already checked by the reader). */
export function parseDecimal(text: string): f64 {
  let i = 0;
  let negative = false;
  if (text.charCodeAt(0) == 0x2d) {
    negative = true;
    i = 1;
  }
  // The significant digits (without the point and leading zeros), and the power of ten they are scaled by.
  const digits = new Array<i32>(0);
  let exponent = 0;
  let afterPoint = false;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c == 0x2e) {
      afterPoint = true;
      continue;
    }
    if (c < 0x30 || c > 0x39) break;
    if (afterPoint) exponent--;
    if (digits.length == 0 && c == 0x30) continue;
    digits.push(c - 0x30);
  }
  if (i < text.length) {
    i++; // e or E
    let expNegative = false;
    if (text.charCodeAt(i) == 0x2b) i++;
    else if (text.charCodeAt(i) == 0x2d) {
      expNegative = true;
      i++;
    }
    let e = 0;
    for (; i < text.length; i++) {
      if (e < 100000) e = e * 10 + (text.charCodeAt(i) - 0x30);
    }
    exponent += expNegative ? -e : e;
  }
  const value = magnitude(digits, exponent);
  return negative ? -value : value;
}

// 768 significant digits decide any f64; past 800, the rest only matters as "something nonzero".
const MAX_DIGITS = 800;

function magnitude(digits: i32[], exponent: i32): f64 {
  while (digits.length > 0 && digits[digits.length - 1] == 0) {
    digits.pop();
    exponent++;
  }
  if (digits.length == 0) return 0;
  if (digits.length > MAX_DIGITS) {
    let sticky = false;
    for (let k = MAX_DIGITS; k < digits.length; k++) if (digits[k] != 0) sticky = true;
    exponent += digits.length - MAX_DIGITS;
    digits.length = MAX_DIGITS;
    if (sticky) {
      digits.push(1);
      exponent--;
    }
  }
  // The value is 0.d1d2… × 10^(exponent + count): far outside the f64 range it is 0 or infinity.
  const scale = exponent + digits.length;
  if (scale > 310) return Infinity;
  if (scale < -326) return 0;

  // Fast path: an exact integer significand and an exact power of ten give a correctly rounded quotient.
  if (digits.length <= 15 && exponent >= -22 && exponent <= 22) {
    let w: f64 = 0;
    for (let k = 0; k < digits.length; k++) w = w * 10 + <f64>digits[k];
    return exponent >= 0 ? w * POW10[exponent] : w / POW10[-exponent];
  }

  // An estimate from the leading 17 digits, then exact steps.
  let lead: f64 = 0;
  const used = min(17, digits.length);
  for (let k = 0; k < used; k++) lead = lead * 10 + <f64>digits[k];
  const leadExponent = exponent + digits.length - used;
  const half = leadExponent / 2;
  let z = lead * Math.pow(10, <f64>half) * Math.pow(10, <f64>(leadExponent - half));
  if (!isFinite(z)) z = F64.MAX_VALUE;
  if (z == 0) z = F64.MIN_VALUE;

  const d = Big.fromDigits(digits);
  for (let step = 0; step < 4096; step++) {
    const bits = reinterpret<u64>(z);
    const e = <i32>(bits >> 52);
    const frac = bits & 0xfffffffffffff;
    const m: u64 = e == 0 ? frac : frac | 0x10000000000000;
    const k: i32 = e == 0 ? -1074 : e - 1075;
    // x: the decimal value, y: z, both scaled to integers by the same factor.
    let x = d.copy();
    let y = Big.fromU64(m);
    if (exponent >= 0) x = x.mulPow10(exponent);
    else y = y.mulPow10(-exponent);
    if (k >= 0) y = y.shl(k);
    else x = x.shl(-k);
    const order = Big.compare(x, y);
    if (order == 0) return z;
    const diff = order > 0 ? Big.sub(x, y) : Big.sub(y, x);
    // |x - y| against half the gap to the neighbour on x's side: 2·m·|x-y| vs y (4·m when the gap below
    // is half as wide, at a power of two).
    const narrowBelow = order < 0 && frac == 0 && e > 1;
    const scaled = Big.mul(diff, Big.fromU64(m)).shl(narrowBelow ? 2 : 1);
    const test = Big.compare(scaled, y);
    if (test < 0) return z;
    if (test == 0 && (m & 1) == 0) return z;
    // Step one float toward x (a tie with odd m goes to the even neighbour).
    z = reinterpret<f64>(order > 0 ? bits + 1 : bits - 1);
    if (!isFinite(z) || z == 0) return z;
    if (test == 0) return z;
  }
  return z;
}

const POW10: f64[] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** A non-negative big integer: 32-bit limbs, least significant first, no leading zero limbs. */
class Big {
  constructor(public limbs: u32[]) {}

  static fromU64(v: u64): Big {
    const limbs = new Array<u32>(0);
    while (v != 0) {
      limbs.push(<u32>v);
      v >>= 32;
    }
    return new Big(limbs);
  }

  static fromDigits(digits: i32[]): Big {
    let b = new Big([]);
    let k = 0;
    while (k < digits.length) {
      // Nine digits at a time: 10^9 fits a limb.
      let chunk: u32 = 0;
      let scale: u32 = 1;
      for (let n = 0; n < 9 && k < digits.length; n++, k++) {
        chunk = chunk * 10 + <u32>digits[k];
        scale *= 10;
      }
      b = b.mulSmall(scale, chunk);
    }
    return b;
  }

  copy(): Big {
    return new Big(this.limbs.slice(0));
  }

  /** this × factor + add. */
  mulSmall(factor: u32, add: u32 = 0): Big {
    const out = new Array<u32>(0);
    let carry: u64 = add;
    for (let i = 0; i < this.limbs.length; i++) {
      const p = <u64>this.limbs[i] * <u64>factor + carry;
      out.push(<u32>p);
      carry = p >> 32;
    }
    if (carry != 0) out.push(<u32>carry);
    return new Big(out);
  }

  mulPow10(n: i32): Big {
    let b: Big = this;
    while (n >= 9) {
      b = b.mulSmall(1000000000);
      n -= 9;
    }
    if (n > 0) b = b.mulSmall(<u32>POW10[n]);
    return b;
  }

  shl(bits: i32): Big {
    if (this.limbs.length == 0 || bits == 0) return this;
    const whole = bits >> 5;
    const part = bits & 31;
    const out = new Array<u32>(whole);
    for (let i = 0; i < whole; i++) out[i] = 0;
    let carry: u32 = 0;
    for (let i = 0; i < this.limbs.length; i++) {
      const v = this.limbs[i];
      out.push(part == 0 ? v : (v << part) | carry);
      carry = part == 0 ? 0 : v >> (32 - part);
    }
    if (carry != 0) out.push(carry);
    return new Big(out);
  }

  static mul(a: Big, b: Big): Big {
    const n = a.limbs.length;
    const m = b.limbs.length;
    if (n == 0 || m == 0) return new Big([]);
    const out = new Array<u32>(n + m);
    for (let i = 0; i < n + m; i++) out[i] = 0;
    for (let i = 0; i < n; i++) {
      let carry: u64 = 0;
      const ai = <u64>a.limbs[i];
      for (let j = 0; j < m; j++) {
        const t = ai * <u64>b.limbs[j] + <u64>out[i + j] + carry;
        out[i + j] = <u32>t;
        carry = t >> 32;
      }
      out[i + m] = <u32>carry;
    }
    while (out.length > 0 && out[out.length - 1] == 0) out.pop();
    return new Big(out);
  }

  /** a − b, for a ≥ b. */
  static sub(a: Big, b: Big): Big {
    const out = new Array<u32>(0);
    let borrow: i64 = 0;
    for (let i = 0; i < a.limbs.length; i++) {
      let t = <i64>a.limbs[i] - (i < b.limbs.length ? <i64>b.limbs[i] : 0) - borrow;
      borrow = t < 0 ? 1 : 0;
      if (t < 0) t += 0x100000000;
      out.push(<u32>t);
    }
    while (out.length > 0 && out[out.length - 1] == 0) out.pop();
    return new Big(out);
  }

  static compare(a: Big, b: Big): i32 {
    if (a.limbs.length != b.limbs.length) return a.limbs.length > b.limbs.length ? 1 : -1;
    for (let i = a.limbs.length - 1; i >= 0; i--) {
      if (a.limbs[i] != b.limbs[i]) return a.limbs[i] > b.limbs[i] ? 1 : -1;
    }
    return 0;
  }
}

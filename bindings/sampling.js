// Sampling of the next token, the same in every engine: a seeded generator (sfc32) and the choice of a token
// from logits (greedy, temperature, top-k, top-p: Hugging Face's order). Used by generate() (causal_lm.js).

/**
 * A seeded uniform generator (sfc32, seeded through splitmix32 from the
 * seed's low and high 32 bits): the same seed gives the same numbers in every
 * engine. next() → [0, 1) with 53 random bits.
 */
export class SeededRandom {
  constructor(seed) {
    let s = (seed % 4294967296 + 4294967296) % 4294967296 >>> 0;
    let h = Math.floor(seed / 4294967296) >>> 0;
    const mix = () => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s ^ h;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      h = (h + 0x6d2b79f5) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this._a = mix(); this._b = mix(); this._c = mix(); this._d = 1;
    for (let i = 0; i < 12; i++) this._u32();
  }
  _u32() {
    const t = (((this._a + this._b) >>> 0) + this._d) >>> 0;
    this._d = (this._d + 1) >>> 0;
    this._a = this._b ^ (this._b >>> 9);
    this._b = (this._c + (this._c << 3)) >>> 0;
    this._c = ((this._c << 21) | (this._c >>> 11)) >>> 0;
    this._c = (this._c + t) >>> 0;
    return t;
  }
  next() {
    return ((this._u32() >>> 5) * 67108864 + (this._u32() >>> 6)) / 9007199254740992;
  }
}

/**
 * The next token from one row of logits, as Hugging Face's generate samples:
 * temperature 0 → the first largest logit (argmax); otherwise logits /
 * temperature, then top-k (keep those >= the k-th largest; 0 = off), then
 * top-p (keep the most probable tokens whose probabilities sum to >= p; 1 =
 * off; at least one), softmax, and one draw of `random` in id order.
 * @param {Float32Array} logits @param {{temperature: number, topK: number, topP: number}} p
 * @param {SeededRandom|null} random
 */
export function sampleToken(logits, p, random) {
  const V = logits.length;
  let best = 0;
  for (let i = 1; i < V; i++) if (logits[i] > logits[best]) best = i;
  if (p.temperature === 0 || Number.isNaN(logits[best])) return best;
  const scaled = new Float64Array(V);
  for (let i = 0; i < V; i++) scaled[i] = logits[i] / p.temperature;
  const max = scaled[best];
  let floor = -Infinity;  // keep ids with scaled >= floor
  if ((p.topK > 0 && p.topK < V) || p.topP < 1) {
    const sorted = Float64Array.from(scaled).sort();  // ascending
    if (p.topK > 0 && p.topK < V) floor = sorted[V - p.topK];
    if (p.topP < 1) {
      let z = 0;
      for (let i = V - 1; i >= 0 && sorted[i] >= floor; i--) z += Math.exp(sorted[i] - max);
      let cum = 0;
      for (let i = V - 1; i >= 0 && sorted[i] >= floor; i--) {
        cum += Math.exp(sorted[i] - max) / z;
        if (cum >= p.topP) { floor = sorted[i]; break; }
      }
    }
  }
  let z = 0;
  for (let i = 0; i < V; i++) z += scaled[i] >= floor ? Math.exp(scaled[i] - max) : 0;
  let u = random.next() * z;
  let last = best;
  for (let i = 0; i < V; i++) {
    if (scaled[i] < floor) continue;
    last = i;
    u -= Math.exp(scaled[i] - max);
    if (u < 0) return i;
  }
  return last;  // rounding left u >= 0: the last kept id
}

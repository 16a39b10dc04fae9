/**
 * Small seeded PRNG (mulberry32). Every pseudo-random choice of the simulator goes through one
 * of these so that a seed reproduces the same workspace, activity and faults.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    // Mix the seed so that neighbouring seeds do not start with correlated outputs.
    this.state = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ 0xc2b2ae35) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Up to `n` distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = items.slice();
    const out: T[] = [];
    while (out.length < n && copy.length > 0) {
      const i = Math.floor(this.next() * copy.length);
      out.push(copy[i] as T);
      copy[i] = copy[copy.length - 1] as T;
      copy.pop();
    }
    return out;
  }
}

/**
 * Opaque, seeded identifiers such as `tkt_4f0k2m9q1zx7`. 62 random bits make a collision among a
 * million ids about a one-in-ten-million event, so only ids chosen from outside are remembered.
 */
export class IdFactory {
  private readonly used = new Set<string>();

  constructor(private readonly rng: Rng) {}

  next(prefix: string): string {
    for (;;) {
      // Two draws of 36^6 each give the 12 base-36 characters.
      const a = Math.floor(this.rng.next() * 2176782336)
        .toString(36)
        .padStart(6, '0');
      const b = Math.floor(this.rng.next() * 2176782336)
        .toString(36)
        .padStart(6, '0');
      const s = `${prefix}_${a}${b}`;
      if (!this.used.has(s)) return s;
    }
  }

  /** Ids chosen from outside (e.g. member ids named in `apiKeys`) must never be generated again. */
  reserve(id: string): void {
    this.used.add(id);
  }
}

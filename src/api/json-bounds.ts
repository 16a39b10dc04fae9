/**
 * Limits on what one upstream value may be (docs/sync.md, "Hostile upstream"). Deeper JSON than
 * MAX_JSON_DEPTH is quarantined rather than stored: SQLite's JSON functions stop at 1000 levels,
 * PostgreSQL's jsonb at its stack limit, and V8's JSON.stringify at its call stack.
 */
export const MAX_JSON_DEPTH = 256;
/** Longer ids are not ids: they would become megabyte URLs, keys and log lines. */
export const MAX_ID_CHARS = 1024;
/** Quarantine reasons and logged values are cut to this many characters. */
export const MAX_REASON_CHARS = 2048;
/** A value quoted inside a reason is cut to this many characters. */
export const MAX_QUOTED_CHARS = 120;

/** Cuts text to `max` characters, saying how much was left out. */
export function clipText(text: string, max = MAX_REASON_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}…(${text.length - max} more characters)`;
}

/** JSON.stringify for a value quoted in a message, cut short. Never throws. */
export function quote(value: unknown, max = MAX_QUOTED_CHARS): string {
  let text: string;
  try {
    text =
      typeof value === 'string'
        ? JSON.stringify(value.length > max ? value.slice(0, max) : value)
        : (JSON.stringify(value) ?? String(value));
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return clipText(text, max);
}

/** Path to the first place nested deeper than `max` levels, or null. Iterative: any depth is safe. */
export function tooDeepAt(value: unknown, max = MAX_JSON_DEPTH): string | null {
  // Every record is checked; almost none is too deep. The walk that names the place allocates a
  // path and an entry list per object, so it runs only once the cheap walk found one.
  if (value === null || typeof value !== 'object' || !deeperThan(value, 0, max)) return null;
  const stack: Array<{ v: unknown; depth: number; path: string }> = [{ v: value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return path || '(record)';
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    for (const [k, x] of entries) {
      if (x !== null && typeof x === 'object') stack.push({ v: x, depth: depth + 1, path: path ? `${path}.${k}` : k });
    }
  }
  return null;
}

/** True when `v` (at `depth`) holds an object `max` levels down. Recursion is bounded by `max`. */
function deeperThan(v: object, depth: number, max: number): boolean {
  if (depth >= max) return true;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (x !== null && typeof x === 'object' && deeperThan(x, depth + 1, max)) return true;
    }
    return false;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    const x = o[k];
    if (x !== null && typeof x === 'object' && deeperThan(x, depth + 1, max)) return true;
  }
  return false;
}

/**
 * A copy of `value` with everything below `max` levels replaced by a marker string, so a record
 * quarantined for its depth can still be stored (and read) as JSON. Iterative.
 */
export function clipDepth(value: unknown, max = MAX_JSON_DEPTH): unknown {
  const marker = `[cut: nested deeper than ${max} levels]`;
  const copy = (v: unknown): unknown => (v !== null && typeof v === 'object' ? (Array.isArray(v) ? [] : {}) : v);
  const root = copy(value);
  const stack: Array<{ src: unknown; dst: unknown; depth: number }> = [{ src: value, dst: root, depth: 0 }];
  while (stack.length > 0) {
    const { src, dst, depth } = stack.pop()!;
    if (src === null || typeof src !== 'object') continue;
    const entries = Array.isArray(src) ? src.map((x, i) => [i, x] as const) : Object.entries(src);
    for (const [k, x] of entries) {
      const isObj = x !== null && typeof x === 'object';
      const out = isObj && depth + 1 >= max ? marker : copy(x);
      (dst as Record<string | number, unknown>)[k] = out;
      if (isObj && out !== marker) stack.push({ src: x, dst: out, depth: depth + 1 });
    }
  }
  return root;
}

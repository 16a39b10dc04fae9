/**
 * Reads what an upstream says about its request allowance: the draft IETF `RateLimit-*` fields
 * and the older `X-RateLimit-*` ones. Any value may be missing or garbage (a hostile upstream);
 * what cannot be read is left out rather than guessed, and the adaptive rate then relies on 429s.
 */

export type HeaderBag = Record<string, string | string[] | undefined>;

export interface RateHints {
  /** Requests allowed per window (`RateLimit-Limit`). */
  limit?: number;
  /** Requests left in the current window (`RateLimit-Remaining`). */
  remaining?: number;
  /** Milliseconds until the allowance is restored (`RateLimit-Reset`), never negative. */
  resetMs?: number;
  /** Sustained requests per second the server states (`RateLimit-Policy: q;w=s` → q/s). */
  policyPerSecond?: number;
}

/** A reset above this is a Unix time in seconds (GitHub's form), not a delta: 2001-09-09. */
const EPOCH_THRESHOLD = 1_000_000_000;

function first(headers: HeaderBag, names: string[]): string | undefined {
  for (const name of names) {
    const v = headers[name];
    const s = Array.isArray(v) ? v[0] : v;
    if (s !== undefined && s.trim() !== '') return s.trim();
  }
  return undefined;
}

/** The leading number of a field; some servers append parameters (`100;w=60`) or list several (`100, 1000;w=3600`). */
function leadingNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)(?=$|[\s;,])/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isFinite(n) ? n : undefined;
}

function policyRate(text: string | undefined, limit: number | undefined): number | undefined {
  if (text === undefined) return undefined;
  // Several policies may be listed; the strictest governs.
  let best: number | undefined;
  for (const item of text.split(',')) {
    const quota = leadingNumber(item.trim()) ?? limit;
    const w = /;\s*w\s*=\s*(\d+(?:\.\d+)?)/.exec(item);
    if (quota === undefined || !w) continue;
    const window = Number(w[1]);
    if (!(window > 0) || !(quota > 0)) continue;
    const rate = quota / window;
    if (best === undefined || rate < best) best = rate;
  }
  return best;
}

/** `headers` as undici gives them (lower-case names); `nowMs` is wall-clock time for Unix-time resets. */
export function parseRateHints(headers: HeaderBag, nowMs: number = Date.now()): RateHints {
  const hints: RateHints = {};
  const limit = leadingNumber(first(headers, ['ratelimit-limit', 'x-ratelimit-limit']));
  if (limit !== undefined && limit > 0) hints.limit = limit;
  const remaining = leadingNumber(first(headers, ['ratelimit-remaining', 'x-ratelimit-remaining']));
  if (remaining !== undefined) hints.remaining = hints.limit === undefined ? remaining : Math.min(remaining, hints.limit);
  const reset = leadingNumber(first(headers, ['ratelimit-reset', 'x-ratelimit-reset']));
  if (reset !== undefined) hints.resetMs = reset > EPOCH_THRESHOLD ? Math.max(0, reset * 1000 - nowMs) : reset * 1000;
  const policy = policyRate(first(headers, ['ratelimit-policy', 'x-ratelimit-policy']), hints.limit);
  if (policy !== undefined) hints.policyPerSecond = policy;
  return hints;
}

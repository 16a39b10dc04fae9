import { ApiError } from './errors.js';
import type { FaultConfig } from './types.js';

/** What the bucket says about one request: the error to answer with (if any) and the headers to add. */
export interface RateDecision {
  error?: ApiError;
  headers: Record<string, string>;
}

/**
 * A token bucket in front of the API, as a real workspace's gateway would ration requests:
 * `rateLimitPerSecond` tokens flow in per second up to `rateLimitBurst`; every API request takes
 * one, and a request that finds the bucket empty is answered 429. It refills on the simulated
 * clock (real time plus advanceClock), so a test can refill it without waiting.
 */
export class TokenBucket {
  private tokens = 0;
  private lastMs = 0;
  /** Rate and size the current level belongs to; a change starts a full bucket. */
  private shape = '';

  /** Forgets the level: the next request finds a full bucket. */
  reset(): void {
    this.shape = '';
  }

  decide(f: FaultConfig, nowMs: number): RateDecision | null {
    const rate = f.rateLimitPerSecond;
    if (!(rate > 0)) {
      this.reset();
      return null;
    }
    const size = Math.max(1, f.rateLimitBurst > 0 ? f.rateLimitBurst : Math.ceil(rate));
    const shape = `${rate}/${size}`;
    if (shape !== this.shape) {
      this.shape = shape;
      this.tokens = size;
      this.lastMs = nowMs;
    }
    this.tokens = Math.min(size, this.tokens + (Math.max(0, nowMs - this.lastMs) * rate) / 1000);
    this.lastMs = nowMs;
    const allowed = this.tokens >= 1;
    if (allowed) this.tokens -= 1;
    const fullInMs = ((size - this.tokens) * 1000) / rate;
    const headers = rateHeaders(f, size, Math.floor(this.tokens), fullInMs);
    if (allowed) return { headers };
    // Whole seconds, rounded up and at least 1, so a client that honours it never comes back early.
    const retryAfter = Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / rate / 1000));
    const value =
      f.retryAfterFormat === 'http-date'
        ? new Date(Math.ceil((Date.now() + retryAfter * 1000) / 1000) * 1000).toUTCString()
        : String(retryAfter);
    const error = new ApiError(
      429,
      'rate_limited',
      `Rate limit of ${rate} requests per second exceeded; retry after the time in Retry-After.`,
      undefined,
      {
        ...headers,
        'retry-after': value,
      },
    );
    return { error, headers };
  }
}

/**
 * The draft IETF fields (`RateLimit-*`, reset in delta seconds) and the older `X-RateLimit-*`
 * ones (reset as a Unix time in seconds, as GitHub sends it), so a client meets both forms.
 */
function rateHeaders(f: FaultConfig, size: number, remaining: number, fullInMs: number): Record<string, string> {
  if (f.rateLimitHeaders === 'none') return {};
  const resetSeconds = Math.ceil(fullInMs / 1000);
  const headers: Record<string, string> = {
    'ratelimit-limit': String(size),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': String(resetSeconds),
    'x-ratelimit-limit': String(size),
    'x-ratelimit-remaining': String(remaining),
    // Wall-clock, not simulated, time: a client compares it with its own clock.
    'x-ratelimit-reset': String(Math.ceil((Date.now() + fullInMs) / 1000)),
  };
  if (f.rateLimitHeaders === 'all') {
    const window = Number((size / f.rateLimitPerSecond).toFixed(3));
    headers['ratelimit-policy'] = `${size};w=${window}`;
  }
  return headers;
}

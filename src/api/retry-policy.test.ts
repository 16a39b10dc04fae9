import { describe, expect, it } from 'vitest';
import { backoffDelay, errorKey, parseRetryAfter, retryDelay, RETRY_TABLE, ruleForStatus } from './retry-policy.js';

describe('retry table', () => {
  it('retries exactly the statuses of docs/design.md §4.8', () => {
    for (const s of [408, 429, 500, 502, 503, 504]) expect(ruleForStatus(s)?.retry, String(s)).toBe(true);
    for (const s of [200, 400, 401, 403, 404, 409, 410, 422, 501, 505]) expect(ruleForStatus(s)?.retry ?? false, String(s)).toBe(false);
  });

  it('retries the network and timeout codes', () => {
    for (const code of [
      'UND_ERR_SOCKET',
      'ECONNRESET',
      'ECONNREFUSED',
      'UND_ERR_CONNECT_TIMEOUT',
      'UND_ERR_HEADERS_TIMEOUT',
      'UND_ERR_BODY_TIMEOUT',
      'EPIPE',
      'ETIMEDOUT',
      'TIMEOUT',
    ]) {
      expect(RETRY_TABLE[code]?.retry, code).toBe(true);
    }
    expect(RETRY_TABLE.ENOTFOUND?.retry).toBe(false);
  });

  it('classifies 429 as rate limiting and honours Retry-After only on responses', () => {
    expect(RETRY_TABLE['429']).toMatchObject({ kind: 'rate_limited', honoursRetryAfter: true });
    expect(RETRY_TABLE['503']?.honoursRetryAfter).toBe(true);
    expect(RETRY_TABLE.ECONNRESET?.honoursRetryAfter).toBe(false);
  });

  it('finds the key of an error by code, by message, or through its cause', () => {
    expect(errorKey(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(errorKey(new Error('other side closed'))).toBe('UND_ERR_SOCKET');
    expect(errorKey(new TypeError('fetch failed', { cause: Object.assign(new Error('y'), { code: 'EPIPE' }) }))).toBe('EPIPE');
    expect(errorKey(Object.assign(new Error('z'), { code: 'UND_ERR_INVALID_ARG' }))).toBeUndefined();
    expect(errorKey('not an error')).toBeUndefined();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter(['2', '9'], now)).toBe(2000);
  });
  it('reads an HTTP date, never negative', () => {
    expect(parseRetryAfter('Wed, 01 May 2024 12:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfter('Wed, 01 May 2024 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores garbage', () => {
    for (const v of [undefined, '', 'soon', '-1', '5s', '1e3', 'NaN', 'Wed, 99 Foo 2024 GMT'])
      expect(parseRetryAfter(v, now), String(v)).toBeUndefined();
  });
});

describe('backoff', () => {
  const opts = { minDelayMs: 250, maxDelayMs: 60_000 };
  it('grows exponentially within [min, min*2^(n-1)]', () => {
    expect(backoffDelay(1, opts, () => 0)).toBe(250);
    expect(backoffDelay(1, opts, () => 0.999)).toBe(250);
    expect(backoffDelay(3, opts, () => 0)).toBe(250);
    expect(backoffDelay(3, opts, () => 1)).toBe(1000);
    for (let n = 1; n <= 12; n++) {
      for (let i = 0; i < 50; i++) {
        const d = backoffDelay(n, opts);
        expect(d).toBeGreaterThanOrEqual(250);
        expect(d).toBeLessThanOrEqual(Math.min(60_000, 250 * 2 ** (n - 1)));
      }
    }
  });
  it('never exceeds maxDelayMs', () => {
    expect(backoffDelay(30, opts, () => 1)).toBe(60_000);
    expect(backoffDelay(1, { minDelayMs: 500, maxDelayMs: 100 }, () => 1)).toBe(100);
  });
  it('prefers Retry-After, capped at maxDelayMs, where the rule honours it', () => {
    const r429 = RETRY_TABLE['429']!;
    expect(retryDelay(r429, 1, 2000, opts)).toBe(2000);
    expect(retryDelay(r429, 1, 3_600_000, opts)).toBe(60_000);
    expect(retryDelay(r429, 2, undefined, opts, () => 1)).toBe(500);
    expect(retryDelay(RETRY_TABLE.ECONNRESET!, 1, 9000, opts, () => 0)).toBe(250);
  });
});

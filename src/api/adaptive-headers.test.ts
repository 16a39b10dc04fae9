import { describe, expect, it } from 'vitest';
import { parseRateHints } from './adaptive-headers.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('parseRateHints', () => {
  it('reads the draft RateLimit-* fields, reset in delta seconds, and the policy as a rate', () => {
    expect(
      parseRateHints({ 'ratelimit-limit': '50', 'ratelimit-remaining': '12', 'ratelimit-reset': '2', 'ratelimit-policy': '50;w=1' }, NOW),
    ).toEqual({ limit: 50, remaining: 12, resetMs: 2000, policyPerSecond: 50 });
  });

  it('reads X-RateLimit-* with a Unix-time reset (GitHub form)', () => {
    const reset = String(NOW / 1000 + 30);
    expect(parseRateHints({ 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': reset }, NOW)).toEqual({
      limit: 5000,
      remaining: 4999,
      resetMs: 30_000,
    });
    // A reset already past is "now", never negative.
    expect(parseRateHints({ 'x-ratelimit-reset': String(NOW / 1000 - 100) }, NOW).resetMs).toBe(0);
  });

  it('takes the leading number of parameterised or listed values and the strictest policy', () => {
    const h = parseRateHints({ 'ratelimit-limit': '100, 1000;w=3600', 'ratelimit-policy': '100;w=60, 1000;w=3600' }, NOW);
    expect(h.limit).toBe(100);
    expect(h.policyPerSecond).toBeCloseTo(1000 / 3600);
  });

  it('leaves out garbage instead of guessing (hostile upstream)', () => {
    expect(
      parseRateHints(
        {
          'ratelimit-limit': 'lots',
          'ratelimit-remaining': '-3',
          'ratelimit-reset': 'soon',
          'ratelimit-policy': '10;w=0',
        },
        NOW,
      ),
    ).toEqual({});
    expect(parseRateHints({ 'ratelimit-limit': '0', 'ratelimit-policy': 'abc;w=x' }, NOW)).toEqual({});
    expect(parseRateHints({}, NOW)).toEqual({});
  });

  it('never reports more remaining than the limit, and takes the first of repeated headers', () => {
    expect(parseRateHints({ 'ratelimit-limit': ['10', '99'], 'ratelimit-remaining': '50' }, NOW)).toEqual({ limit: 10, remaining: 10 });
  });
});

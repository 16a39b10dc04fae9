import { describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config/index.js';
import { DEFAULT_FULL_LOOKBACK_EVERY_SECONDS, DEFAULT_TICK_OVERLAP_SECONDS } from '../../src/sync/index.js';

describe('window config keys (docs/sync.md, "Windows and lookback")', () => {
  const issues = (input: object) => {
    const r = configSchema.safeParse(input);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('defaults match the sync code, and an overlap larger than the lookback is refused naming the key', () => {
    const parsed = configSchema.parse({});
    expect(parsed.tickOverlapSeconds).toBe(DEFAULT_TICK_OVERLAP_SECONDS);
    expect(parsed.fullLookbackEverySeconds).toBe(DEFAULT_FULL_LOOKBACK_EVERY_SECONDS);
    expect(issues({ lookbackSeconds: 60, tickOverlapSeconds: 61 })).toEqual([
      expect.stringMatching(/^tickOverlapSeconds: must be at most lookbackSeconds \(60\)/),
    ]);
    expect(issues({ tickOverlapSeconds: -1, fullLookbackEverySeconds: 1.5 })).toHaveLength(2);
    expect(issues({ lookbackSeconds: 60, tickOverlapSeconds: 60, fullLookbackEverySeconds: 0 })).toEqual([]);
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './load.js';

function dirWith(config: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-config-'));
  writeFileSync(join(dir, 'wsmirror.json'), JSON.stringify(config));
  return dir;
}

describe('maxRequestsPerSecond "auto" and its ceiling', () => {
  it('defaults to a fixed 10 with a ceiling of 100, and accepts "auto"', () => {
    const defaults = loadConfig({ cwd: dirWith({}), env: {} }).config;
    expect(defaults.maxRequestsPerSecond).toBe(10);
    expect(defaults.maxRequestsPerSecondCeiling).toBe(100);
    const auto = loadConfig({ cwd: dirWith({ maxRequestsPerSecond: 'auto', maxRequestsPerSecondCeiling: 40 }), env: {} }).config;
    expect(auto.maxRequestsPerSecond).toBe('auto');
    expect(auto.maxRequestsPerSecondCeiling).toBe(40);
  });

  it('names the key, the value and what is allowed when either is wrong', () => {
    expect(() => loadConfig({ cwd: dirWith({ maxRequestsPerSecond: 'fast' }), env: {} })).toThrow(
      /maxRequestsPerSecond: got "fast".*a number above 0 and at most 10000, or "auto"/,
    );
    expect(() => loadConfig({ cwd: dirWith({ maxRequestsPerSecond: 0 }), env: {} })).toThrow(/maxRequestsPerSecond: got 0/);
    expect(() => loadConfig({ cwd: dirWith({ maxRequestsPerSecondCeiling: -5 }), env: {} })).toThrow(/maxRequestsPerSecondCeiling: got -5/);
  });
});

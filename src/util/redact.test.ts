import { describe, expect, it } from 'vitest';
import { REDACTED, SecretRedactor } from './redact.js';

describe('SecretRedactor', () => {
  it('scrubs every registered secret, the longest first, and ignores empty or short values', () => {
    const r = new SecretRedactor();
    r.add('key-123', null, undefined, '', 'abc', 'key-123-long');
    expect(r.values).toEqual(['key-123-long', 'key-123']);
    expect(r.redact('a key-123-long and a key-123, not abc')).toBe('a [redacted] and a [redacted], not abc');
  });

  it('keeps one copy of a value added twice', () => {
    const r = new SecretRedactor();
    r.add('p%40ss', 'p%40ss');
    expect(r.values).toEqual(['p%40ss']);
  });

  it('hides any bearer token, registered or not, behind the same placeholder', () => {
    const r = new SecretRedactor('db-pass');
    expect(REDACTED).toBe('[redacted]');
    expect(r.redact('postgres://u:db-pass@h/x with Authorization: Bearer rotated-token')).toBe(
      'postgres://u:[redacted]@h/x with Authorization: Bearer [redacted]',
    );
  });
});

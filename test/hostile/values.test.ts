import { describe, expect, it } from 'vitest';
import { json } from '../../src/store/values.js';

/** U+0000 is cleaned from JSON keys as well as values (PostgreSQL jsonb cannot hold it). */
describe('json() and U+0000', () => {
  it('replaces U+0000 in keys and values, nested, with U+FFFD', () => {
    const text = json({ 'k\u0000': { 'in\u0000ner': ['v\u0000al'] } })!;
    expect(text).not.toContain('\\u0000');
    expect(JSON.parse(text)).toEqual({ 'k\uFFFD': { 'in\uFFFDner': ['v\uFFFDal'] } });
  });

  it('leaves a literal backslash-u0000 text alone: only a real escape is a NUL', () => {
    const value = { a: '\\u0000', b: '\\\u0000', c: '\\\\u0000' };
    expect(JSON.parse(json(value)!)).toEqual({ a: '\\u0000', b: '\\\uFFFD', c: '\\\\u0000' });
  });
});

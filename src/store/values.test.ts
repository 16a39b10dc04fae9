import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { json, jsonWithList } from './values.js';

/** Strings with what json() must clean (U+0000, lone surrogates) and the list mark itself. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('\u0000', '\ud800', 'a\\u0000', '@@wsmirror:list:9c41e7@@', '"messages":[]'),
);
const value = fc.letrec((tie) => ({
  leaf: fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tie('leaf'),
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(text, tie('node'), { maxKeys: 4 }),
  ),
})).node;

describe('jsonWithList', () => {
  it('writes the same text as json() of the whole record, whatever the record holds', () => {
    fc.assert(
      fc.property(
        fc.dictionary(text, value, { maxKeys: 5 }),
        fc.array(fc.dictionary(text, value, { maxKeys: 4 }), { maxLength: 5 }),
        (rest, messages) => {
          const record = { ...rest, messages };
          expect(
            jsonWithList(
              record,
              'messages',
              messages.map((m) => json(m)),
            ),
          ).toBe(json(record));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps the position of the list among the keys and falls back when the list is not one', () => {
    const record = { id: 't1', messages: [{ id: 'm1', body: 'x\u0000y' }], after: '@@wsmirror:list:9c41e7@@' };
    expect(
      jsonWithList(
        record,
        'messages',
        record.messages.map((m) => json(m)),
      ),
    ).toBe(json(record));
    expect(jsonWithList({ id: 't2', messages: null }, 'messages', [])).toBe(json({ id: 't2', messages: null }));
    expect(jsonWithList({ id: 't3', messages: [{ a: 1 }] }, 'messages', [])).toBe('{"id":"t3","messages":[{"a":1}]}');
  });
});

import { describe, expect, it } from 'vitest';
import { baseColumnName, columnNameFor, joinTypes, typeOfValue } from '../../src/report/custom-field-types.js';

/** The naming and type rules of docs/schema.md ("Custom fields as columns"), case by case. */
describe('custom field column names', () => {
  const own = ['ticket_id'];
  it('normalise to lower-case ASCII identifiers', () => {
    expect(baseColumnName('Deal Size', own)).toBe('deal_size');
    expect(baseColumnName('Résumé (URL)', own)).toBe('resume_url');
    expect(baseColumnName('2fa', own)).toBe('f_2fa');
    expect(baseColumnName('***', own)).toBe('field');
  });
  it('keep clear of reserved words and the table own columns', () => {
    expect(baseColumnName('Order', own)).toBe('order_field');
    expect(baseColumnName('user', own)).toBe('user_field');
    expect(baseColumnName('ticket_id', own)).toBe('ticket_id_field');
    expect(baseColumnName('plan', own)).toBe('plan');
  });
  it('stay within 63 characters, telling long keys apart', () => {
    const a = baseColumnName('x'.repeat(80), own);
    const b = baseColumnName(`${'x'.repeat(79)}y`, own);
    expect(a.length).toBe(63);
    expect(b.length).toBe(63);
    expect(a).not.toBe(b);
  });
  it('give a colliding key the first free suffix, also when cut', () => {
    expect(columnNameFor('deal_size', own, new Set(['deal_size']))).toBe('deal_size_2');
    expect(columnNameFor('Deal-Size', own, new Set(['deal_size', 'deal_size_2']))).toBe('deal_size_3');
    const long = 'k'.repeat(63);
    const name = columnNameFor(long, own, new Set([long]));
    expect(name).toBe(`${'k'.repeat(61)}_2`);
  });
});

describe('custom field types', () => {
  it('type each value by the narrowest type that holds it exactly', () => {
    expect(typeOfValue('12.5', '12.5')).toBe('number');
    expect(typeOfValue('true', 'true')).toBe('boolean');
    expect(typeOfValue('2024-02-29', '"2024-02-29"')).toBe('date');
    expect(typeOfValue('2023-02-29', '"2023-02-29"')).toBe('text');
    expect(typeOfValue('2024-05-02T10:30:00+02:00', '"2024-05-02T10:30:00+02:00"')).toBe('timestamp');
    expect(typeOfValue('2024-05-02T10:30:00.123456Z', '"2024-05-02T10:30:00.123456Z"')).toBe('text');
    expect(typeOfValue('42', '"42"')).toBe('text');
    expect(typeOfValue(null, '{"a":1}')).toBe('text');
    expect(typeOfValue(null, 'null')).toBeNull();
  });
  it('widen only to text, and never narrow', () => {
    expect(joinTypes(null, 'number')).toBe('number');
    expect(joinTypes('number', null)).toBe('number');
    expect(joinTypes('number', 'text')).toBe('text');
    expect(joinTypes('date', 'timestamp')).toBe('text');
    expect(joinTypes('text', 'number')).toBe('text');
  });
});

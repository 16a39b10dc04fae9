import { entityOf, type RecordType, type TrackedField } from '../entities/index.js';

export type { TrackedField } from '../entities/index.js';
import { centsText, dateOnly, parseAmount, str } from './values.js';

/** The tracked fields of a record type, as its entity declares them (src/entities/). */
export const trackedFields = (kind: RecordType): readonly TrackedField[] => entityOf(kind).tracked;

/** The history fields of a kind, in declaration order. */
export const trackedFieldNames = (kind: RecordType): string[] => trackedFields(kind).map((f) => f.field);

/** Letters and digits only, lower case: `stage_id`, `stageId` and `StageID` all become `stageid`. */
export const squash = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]/g, '');

/** True when `key` spells the field: its API name or column, with or without an `id` suffix. */
export function spelledAs(f: TrackedField, key: string): boolean {
  const k = squash(key);
  return [squash(f.name), squash(f.field)].some((n) => k === n || k === `${n}id`);
}

/** The tracked field `key` spells, if any. */
export function fieldSpelledBy(kind: RecordType, key: string): TrackedField | undefined {
  return trackedFields(kind).find((f) => spelledAs(f, key));
}

/**
 * The tracked field a key may be about without spelling it (`stageName`, `ownerEmail`,
 * `pipelineId`): its squashed form starts with the field's name or an implied one.
 */
export function fieldHintedBy(kind: RecordType, key: string): TrackedField | undefined {
  const k = squash(key);
  return trackedFields(kind).find((f) => [f.name, ...(f.implied ?? [])].some((n) => k.startsWith(squash(n))));
}

/** The field whose dedicated event verb this is (`stage_changed`, `owner_changed`, `assigned`), if any. */
export function fieldOfVerb(kind: RecordType, verb: string): TrackedField | undefined {
  const v = squash(verb);
  return trackedFields(kind).find(
    (f) => (f.verbs ?? []).some((alias) => squash(alias) === v) || (v.endsWith('changed') && spelledAs(f, v.slice(0, -'changed'.length))),
  );
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A scalar, or a reference object's `id`; undefined when neither (an array, a boolean, an object without id). */
function scalarOrRef(v: unknown): string | null | undefined {
  if (v === null) return null;
  if (typeof v === 'string' || typeof v === 'number') return str(v);
  if (isObject(v) && 'id' in v) return v.id === null ? null : typeof v.id === 'string' || typeof v.id === 'number' ? str(v.id) : undefined;
  return undefined;
}

/**
 * One from/to value as history rows hold it, read the way the re-read stores the column (so an
 * event and an observation of the same change agree): ids and labels as text, a reference
 * object by its `id`, an amount as exact decimal text (`1234.50`), a close date as `yyyy-mm-dd`.
 * Undefined when the value cannot be read so (then the event tells no row).
 */
export function readValue(f: TrackedField, v: unknown): string | null | undefined {
  const plain = scalarOrRef(v);
  if (plain === undefined || plain === null || f.value === 'id' || f.value === 'text') return plain;
  try {
    if (f.value === 'date') return dateOnly(plain, f.field);
    // More than two decimals would be rounded into cents: not the exact figure, so not read.
    const { amount, cents } = parseAmount(plain);
    return /\.\d{2}\d*[1-9]$/.test(amount ?? '') ? undefined : centsText(cents);
  } catch {
    return undefined;
  }
}

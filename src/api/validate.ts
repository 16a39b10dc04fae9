import type { z } from 'zod';
import { clipDepth, clipText, MAX_ID_CHARS, MAX_JSON_DEPTH, tooDeepAt } from './json-bounds.js';
import type { InvalidItem } from './types.js';

type EntityType = InvalidItem['entityType'];

/** At most this many issues go into a reason: enough to fix the data, short enough for a log line. */
const MAX_ISSUES = 3;

/** "updatedAt: not a valid ISO 8601 timestamp (got \"yesterday\"); stage.isWon: must be a boolean" */
export function formatReason(error: z.ZodError, raw: unknown): string {
  const parts = error.issues.slice(0, MAX_ISSUES).map((issue) => {
    const where = issue.path.length === 0 ? '(record)' : issue.path.map(String).join('.');
    // zod does not report the input by default; look it up so "missing" reads as such.
    const missing = issue.code === 'invalid_type' && valueAt(raw, issue.path) === undefined;
    const message = missing ? 'is missing' : clipText(issue.message, 300);
    return `${clipText(where, 200)}: ${message}`;
  });
  const more = error.issues.length - MAX_ISSUES;
  return clipText(more > 0 ? `${parts.join('; ')}; and ${more} more` : parts.join('; '));
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let v = raw;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[key];
  }
  return v;
}

/** The record's id when it can be read at all, so quarantine can key on it. */
export function readableId(raw: unknown): string | null {
  if (raw === null || typeof raw !== 'object') return null;
  const value = (raw as { id?: unknown }).id;
  if (typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_CHARS) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; invalid: InvalidItem };

export function validateRecord<S extends z.ZodType>(entityType: EntityType, schema: S, raw: unknown): Validated<z.output<S>> {
  const deep = tooDeepAt(raw);
  if (deep !== null) {
    const reason = `${clipText(deep, 200)}: nested deeper than ${MAX_JSON_DEPTH} levels (the mirror cannot store it faithfully)`;
    return { ok: false, invalid: { entityType, id: readableId(raw), reason, raw: clipDepth(raw) } };
  }
  const result = schema.safeParse(raw);
  if (result.success) return { ok: true, value: result.data };
  return { ok: false, invalid: { entityType, id: readableId(raw), reason: formatReason(result.error, raw), raw } };
}

/** Validates each list item on its own: one bad record never costs the page. */
export function validateItems<S extends z.ZodType>(
  entityType: EntityType,
  schema: S,
  raws: readonly unknown[],
): { items: z.output<S>[]; invalid: InvalidItem[] } {
  const items: z.output<S>[] = [];
  const invalid: InvalidItem[] = [];
  for (const raw of raws) {
    const r = validateRecord(entityType, schema, raw);
    if (r.ok) items.push(r.value);
    else invalid.push(r.invalid);
  }
  return { items, invalid };
}

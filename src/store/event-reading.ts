import { clipText } from '../api/index.js';
import { fieldHintedBy, fieldOfVerb, fieldSpelledBy, readValue, squash, trackedFields, type TrackedField } from './tracked-fields.js';
import type { RecordType } from '../entities/index.js';
import { json } from './values.js';

/** One tracked field's change an event tells. */
export interface ReadChange {
  field: string;
  from: string | null;
  to: string | null;
}

/** What one change-log event tells of a ticket's or deal's tracked fields (docs/sync.md, "History"). */
export interface EventReading {
  changes: ReadChange[];
  /**
   * Set when the event may hide a change of a tracked field that cannot be read from it: the
   * record's history is then incomplete. `fields` are the fields it may hide, `why` says what in
   * the payload could not be read.
   */
  unreadable: { fields: string[]; why: string } | null;
}

/**
 * Verbs of ticket and deal events that change no tracked field, whatever their payload: messages
 * come and go, records are created or leave the list. A server that changes a tracked field in
 * the same write logs that change too (the `{from, to}` events of docs/upstream.md).
 */
const UNTRACKED_VERBS = new Set(
  ['created', 'replied', 'note_added', 'customer_replied', 'message_removed', 'deleted', 'spam', 'merged'].map(squash),
);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A `{from, to}` change object: both keys present. */
const isChange = (v: unknown): v is { from: unknown; to: unknown } => isObject(v) && 'from' in v && 'to' in v;

/** A value that plainly describes a change (of an untracked field): an object with `from` or `to`. */
const looksLikeChange = (v: unknown) => isObject(v) && ('from' in v || 'to' in v);

/**
 * Keys under which a payload may list the names of the fields an event changed, without their
 * values (`{"changed": ["subject"]}`): docs/sync.md, "History".
 */
const FIELD_LIST_KEYS = new Set(['changed', 'changes', 'changedfields', 'updatedfields', 'fields']);

const isNameList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

const shown = (v: unknown) => clipText(json(v) ?? 'undefined', 120);

/** The verb of an event type: what follows the last dot (`deal.stage_changed` → `stage_changed`). */
export const verbOf = (type: string | null): string => (type ?? '').slice((type ?? '').lastIndexOf('.') + 1);

/**
 * Reads one event of a ticket or deal, by the rules of docs/sync.md ("History"):
 * - a verb that changes no tracked field (created, replied, …) tells nothing and hides nothing;
 * - a dedicated verb (`status_changed`, `stage_changed`, `assigned`, `<any spelling>_changed`)
 *   tells its field from a `{from, to}` payload (or from the field's key in a payload of changes);
 * - any other verb (`updated` or one never seen) is read as a payload of changes
 *   `{<field>: {from, to}, …}`, each tracked field under any spelling, values as ids, scalars or
 *   reference objects. A key that is not a readable change (a tracked field without from/to, a
 *   key hinting at one such as `stageName`, or any key whose value is not a change at all, like
 *   `{"summary": "Stage updated"}`) and an empty payload make the event unreadable: it may hide a
 *   change. Untracked fields changed as `{from, to}` (subject, tags, `fields.<key>`, …) are fine.
 *   A list of the changed fields' names (`{"changed": ["subject"]}`) hides the tracked fields it
 *   names, and nothing when it names only untracked ones.
 */
export function readEvent(kind: RecordType, type: string | null, payload: unknown): EventReading {
  const reading = readByVerb(kind, type, payload);
  if (reading.unreadable === null) return reading;
  const order = trackedFields(kind).map((f) => f.field);
  const fields = [...reading.unreadable.fields].sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return { changes: reading.changes, unreadable: { fields, why: reading.unreadable.why } };
}

function readByVerb(kind: RecordType, type: string | null, payload: unknown): EventReading {
  const verb = verbOf(type);
  if (UNTRACKED_VERBS.has(squash(verb))) return { changes: [], unreadable: null };
  const dedicated = fieldOfVerb(kind, verb);
  if (dedicated && isObject(payload) && ('from' in payload || 'to' in payload)) {
    const one = readOne(dedicated, payload);
    return one === 'unreadable'
      ? {
          changes: [],
          unreadable: { fields: hidden(kind, [dedicated]), why: `its payload ${shown(payload)} is not a readable {from, to}` },
        }
      : { changes: one ? [one] : [], unreadable: null };
  }
  const reading = readChanges(kind, payload);
  if (dedicated && !reading.seen.has(dedicated.field)) {
    const why = `its payload ${shown(payload)} holds no readable {from, to} of ${dedicated.field}`;
    return { changes: reading.changes, unreadable: merge(reading.unreadable, hidden(kind, [dedicated]), why) };
  }
  return { changes: reading.changes, unreadable: reading.unreadable };
}

/** A payload of changes, key by key; `seen` holds the tracked fields it told (a change or a no-op). */
function readChanges(kind: RecordType, payload: unknown): EventReading & { seen: Set<string> } {
  const out: EventReading & { seen: Set<string> } = { changes: [], unreadable: null, seen: new Set() };
  if (!isObject(payload) || Object.keys(payload).length === 0) {
    out.unreadable = { fields: hidden(kind, trackedFields(kind)), why: `its payload ${shown(payload)} names no field` };
    return out;
  }
  for (const [key, value] of Object.entries(payload)) {
    const field = fieldSpelledBy(kind, key);
    if (field) {
      const one = readOne(field, value);
      if (one !== 'unreadable') {
        out.seen.add(field.field);
        if (one) out.changes.push(one);
        continue;
      }
      out.unreadable = merge(out.unreadable, hidden(kind, [field]), `${key} is ${shown(value)}, not a readable {from, to}`);
      continue;
    }
    const hinted = fieldHintedBy(kind, key);
    if (hinted) {
      out.unreadable = merge(out.unreadable, hidden(kind, [hinted]), `${key} may stand for ${hinted.field}`);
      continue;
    }
    if (looksLikeChange(value)) continue; // an untracked field's change: subject, tags, fields.<key>, …
    if (FIELD_LIST_KEYS.has(squash(key)) && isNameList(value) && value.length > 0) {
      // A list of the fields changed, without from/to: the tracked ones it names (or hints at) are
      // hidden; a list that names only untracked fields (subject, tags, …) plainly hides nothing.
      const named = namedFields(kind, value);
      if (named.length > 0)
        out.unreadable = merge(out.unreadable, hidden(kind, named), `${key} is ${shown(value)}, naming a change without from/to`);
      continue;
    }
    out.unreadable = merge(out.unreadable, hidden(kind, trackedFields(kind)), `${key} is ${shown(value)}, not a {from, to} change`);
  }
  return out;
}

/** One field's `{from, to}`: the change, null when from equals to (nothing changed), or 'unreadable'. */
function readOne(f: TrackedField, v: unknown): ReadChange | null | 'unreadable' {
  if (!isChange(v)) return 'unreadable';
  const from = readValue(f, v.from);
  const to = readValue(f, v.to);
  if (from === undefined || to === undefined) return 'unreadable';
  return from === to ? null : { field: f.field, from, to };
}

/** The fields an unreadable change of `fields` may hide: those that follow them too (a deal's status, its stage). */
/** The tracked fields a list of field names names, under any spelling, or hints at. */
function namedFields(kind: RecordType, names: readonly string[]): TrackedField[] {
  const out: TrackedField[] = [];
  for (const name of names) {
    const field = fieldSpelledBy(kind, name) ?? fieldHintedBy(kind, name);
    if (field && !out.includes(field)) out.push(field);
  }
  return out;
}

function hidden(kind: RecordType, fields: readonly TrackedField[]): string[] {
  const names = fields.map((f) => f.field);
  for (const f of trackedFields(kind))
    if (f.follows !== undefined && names.includes(f.follows) && !names.includes(f.field)) names.push(f.field);
  return names;
}

function merge(prev: EventReading['unreadable'], fields: readonly string[], why: string): NonNullable<EventReading['unreadable']> {
  if (prev === null) return { fields: [...fields], why };
  return { fields: [...new Set([...prev.fields, ...fields])], why: `${prev.why}; ${why}` };
}

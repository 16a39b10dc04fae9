/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Truth, TruthChange } from '../../src/simulator/index.js';

/**
 * The tracked history as the simulator knows it, whatever the dialect spells in its change log:
 * read from the truth's canonical `changes` (one row per field change, ids and scalars, never the
 * event's payload), so the tests' expectations share no reading code with src/sync or src/store.
 * The tracked fields are those docs/schema.md lists for ticket_history and deal_history.
 */

export type Kind = 'ticket' | 'deal';

/** Simulator field name -> history column, per record kind (docs/schema.md, "History semantics"). */
export const TRACKED: Readonly<Record<Kind, Readonly<Record<string, string>>>> = {
  ticket: { status: 'status', priority: 'priority', assigneeId: 'assignee_id', teamId: 'team_id' },
  deal: { stageId: 'stage_id', amount: 'amount', currency: 'currency', closeDate: 'close_date', ownerId: 'owner_id' },
};

/** One record's changes of one simulator field, oldest first (the truth lists newest first). */
export function changesOf(truth: Truth, kind: Kind, id: string, field: string): TruthChange[] {
  return truth.changes.filter((c) => c.entityType === kind && c.entityId === id && c.field === field).reverse();
}

/**
 * Whether the change log shows its changes without from/to: then no client can read any of them,
 * and every record with a tracked change must say its history is incomplete.
 */
export function logHidesChanges(truth: Truth): boolean {
  return truth.dialect.changeEvents === 'opaque';
}

/**
 * Every record a client cannot know the whole tracked history of, keyed `kind:id`, with the ids of
 * the events that hide its changes, oldest first, under a log that hides its changes
 * (docs/sync.md, "Exact, or it says it is not"):
 * - a prose summary (`opaquePayload: "summary"`) names nothing a client can rely on, so every
 *   event with a change hides one, whatever it changed (a subject-only change too);
 * - a list of the changed fields' names (`opaquePayload: "changed"`) plainly says which fields
 *   changed, so only an event that changed a tracked field hides one.
 * (Records created before the log starts are the caller's business: the lives the tests script
 * are all inside it.)
 */
export function unreadableRecords(truth: Truth): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!logHidesChanges(truth)) return out;
  const namesFields = truth.dialect.opaquePayload === 'changed';
  for (const c of [...truth.changes].reverse()) {
    const hiding = !namesFields || truth.changes.some((o) => o.eventId === c.eventId && TRACKED[o.entityType][o.field] !== undefined);
    if (!hiding) continue;
    const key = `${c.entityType}:${c.entityId}`;
    const events = out.get(key) ?? [];
    if (!events.includes(c.eventId)) events.push(c.eventId);
    out.set(key, events);
  }
  return out;
}

const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const money = (v: unknown) => (v === null || v === undefined ? null : (Math.round(Number(v) * 100) / 100).toFixed(2));
/** An ISO instant as the store writes it (docs/schema.md, "How values are stored"). */
export const storedTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;

/**
 * The history rows a complete reading of the change log gives, as `id|field|from|to|stored time`
 * keys, sorted: one per tracked change, plus a deal's status when its stage move crosses
 * categories (open / won / lost). Records in `skip` (kind:id) are left out.
 */
export function expectedHistory(truth: Truth, skip: ReadonlySet<string> = new Set()): string[] {
  const category = new Map(
    (truth.pipelines as any[]).flatMap((p) =>
      (p.stages as any[]).map((s) => [s.id, s.isWon ? 'won' : s.isLost ? 'lost' : 'open'] as const),
    ),
  );
  const out: string[] = [];
  const add = (c: TruthChange, field: string, from: unknown, to: unknown) => {
    const f = text(from);
    const t = text(to);
    if (f !== t) out.push(`${c.entityId}|${field}|${f}|${t}|${storedTime(c.occurredAt)}`);
  };
  for (const c of truth.changes) {
    const column = TRACKED[c.entityType][c.field];
    if (column === undefined || skip.has(`${c.entityType}:${c.entityId}`)) continue;
    if (column === 'amount') add(c, column, money(c.from), money(c.to));
    else add(c, column, c.from, c.to);
    if (column === 'stage_id') add(c, 'status', category.get(c.from), category.get(c.to));
  }
  return out.sort();
}

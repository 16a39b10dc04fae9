/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Truth } from '../../src/simulator/index.js';
import type { Store } from '../../src/store/index.js';
import { changesOf, unreadableRecords, type Kind } from '../helpers/truth-history.js';
import { rows } from './oracle.js';

/**
 * The custom field, versions and daily tables computed in plain JS from the simulator's truth (its
 * records, its canonical change list and its events), sharing no code with src/report: the
 * expectation of test/report/bi-tables.test.ts and the property test. Definitions follow
 * docs/schema.md ("Custom fields as columns", "Versions", "Daily state").
 */
type Rec = Record<string, any>;
const DAY = 86_400_000;
const ms = (iso: string) => Date.parse(iso);
const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const money = (v: unknown) => (v === null || v === undefined ? null : Number((Math.round(Number(v) * 100) / 100).toFixed(2)));

/** Per kind: column -> [truth field, current value of a record]. Deal status follows its stage's category. */
const FIELDS: Record<Kind, Record<string, [string | null, (r: Rec) => unknown]>> = {
  ticket: {
    status: ['status', (t) => t.status],
    priority: ['priority', (t) => t.priority],
    assignee_id: ['assigneeId', (t) => t.assignee?.id ?? null],
    team_id: ['teamId', (t) => t.team?.id ?? null],
  },
  deal: {
    stage_id: ['stageId', (d) => d.stage.id],
    status: [null, (d) => d.status],
    amount: ['amount', (d) => money(d.amount)],
    currency: ['currency', (d) => d.currency],
    owner_id: ['ownerId', (d) => d.owner?.id ?? null],
    close_date: ['closeDate', (d) => d.closeDate ?? null],
  },
};

const norm = (field: string, v: unknown) => (field === 'amount' ? money(v) : (v ?? null));

/** A record's life as the oracle needs it: its creation, its deletion (if deleted), its current copy. */
export interface Life {
  kind: Kind;
  record: Rec;
  deletedAt: string | null;
}

/** Records an earlier truth listed and the final one does not, each as last listed. */
export function goneFrom(snapshots: readonly Truth[], truth: Truth): Life[] {
  const last = new Map<string, Life>();
  for (const s of snapshots) {
    for (const r of s.tickets as Rec[]) last.set(`ticket:${r.id}`, { kind: 'ticket', record: r, deletedAt: null });
    for (const r of s.deals as Rec[]) last.set(`deal:${r.id}`, { kind: 'deal', record: r, deletedAt: null });
  }
  for (const r of truth.tickets as Rec[]) last.delete(`ticket:${r.id}`);
  for (const r of truth.deals as Rec[]) last.delete(`deal:${r.id}`);
  return [...last.values()];
}

/** Every record of the truth, plus deleted ones as last seen (`gone`: copies taken before the deletion). */
export function lives(truth: Truth, gone: readonly Life[] = []): Life[] {
  const deleted = new Map<string, string>();
  for (const e of truth.events as Rec[])
    if (e.type === 'deal.deleted' || e.type === 'ticket.deleted') deleted.set(`${e.entityType}:${e.entityId}`, e.occurredAt);
  const out: Life[] = [
    ...(truth.tickets as Rec[]).map((r): Life => ({ kind: 'ticket', record: r, deletedAt: null })),
    ...(truth.deals as Rec[]).map((r): Life => ({ kind: 'deal', record: r, deletedAt: null })),
  ];
  for (const g of gone) out.push({ ...g, deletedAt: deleted.get(`${g.kind}:${g.record.id}`) ?? g.deletedAt });
  return out;
}

function categoryOf(truth: Truth): Map<string, string> {
  return new Map(
    (truth.pipelines as Rec[]).flatMap((p) => (p.stages as Rec[]).map((s) => [s.id, s.isWon ? 'won' : s.isLost ? 'lost' : 'open'])),
  );
}

/** The tracked fields' values just after every change at or before `at` (else each first change's from, else the current copy). */
function stateAt(truth: Truth, life: Life, at: number, strict: boolean): Rec {
  const out: Rec = {};
  for (const [column, [field, current]] of Object.entries(FIELDS[life.kind])) {
    if (field === null) continue;
    const moves = changesOf(truth, life.kind, life.record.id, field).filter(
      (c) => JSON.stringify(norm(column, c.from)) !== JSON.stringify(norm(column, c.to)),
    );
    const before = moves.filter((c) => (strict ? ms(c.occurredAt) < at : ms(c.occurredAt) <= at));
    out[column] =
      before.length > 0 ? norm(column, before.at(-1)!.to) : moves.length > 0 ? norm(column, moves[0]!.from) : current(life.record);
  }
  if (life.kind === 'deal') {
    out.status = categoryOf(truth).get(out.stage_id as string) ?? life.record.status;
  }
  return out;
}

/** The instants a version starts at: the creation, then each tracked change while the record lived. */
function starts(truth: Truth, life: Life): number[] {
  const created = ms(life.record.createdAt);
  const end = life.deletedAt ? ms(life.deletedAt) : Infinity;
  const at = new Set<number>([created]);
  for (const [column, [field]] of Object.entries(FIELDS[life.kind])) {
    if (field === null) continue;
    for (const c of changesOf(truth, life.kind, life.record.id, field)) {
      const t = ms(c.occurredAt);
      if (t > created && t < end && JSON.stringify(norm(column, c.from)) !== JSON.stringify(norm(column, c.to))) at.add(t);
    }
  }
  return [...at].sort((a, b) => a - b);
}

const iso = (t: number) => new Date(t).toISOString();

/** The versions rows of every life, keyed as the table: id, valid_from, valid_to, fields, source, complete. */
export function versionRows(truth: Truth, all: readonly Life[]): Rec[] {
  const hidden = unreadableRecords(truth);
  const out: Rec[] = [];
  for (const life of all) {
    const s = starts(truth, life);
    s.forEach((t, i) => {
      const next = s[i + 1];
      out.push({
        kind: life.kind,
        id: life.record.id,
        valid_from: iso(t),
        valid_to: next !== undefined ? iso(next) : life.deletedAt ? iso(ms(life.deletedAt)) : null,
        ...stateAt(truth, life, t, false),
        source: i === 0 ? 'created' : 'event',
        complete: hidden.has(`${life.kind}:${life.record.id}`) ? 0 : 1,
      });
    });
  }
  return out;
}

/** The daily rows of every life within the window of `windowDays` days ending on `now`'s UTC day. */
export function dailyRows(truth: Truth, all: readonly Life[], now: string, windowDays: number): Rec[] {
  const hidden = unreadableRecords(truth);
  const today = ms(`${now.slice(0, 10)}T00:00:00.000Z`);
  const first = today - (windowDays - 1) * DAY;
  const out: Rec[] = [];
  for (const life of all) {
    const created = ms(`${life.record.createdAt.slice(0, 10)}T00:00:00.000Z`);
    const last = life.deletedAt ? Math.min(today, ms(`${life.deletedAt.slice(0, 10)}T00:00:00.000Z`)) : today;
    for (let d = Math.max(created, first); d <= last; d += DAY) {
      // The state at the day's end (today: now), or just before the deletion.
      const cut = Math.min(d === today ? ms(now) + 1 : d + DAY, life.deletedAt ? ms(life.deletedAt) : Infinity);
      out.push({
        kind: life.kind,
        id: life.record.id,
        day: dayOf(d),
        ...stateAt(truth, life, cut, true),
        history_complete: hidden.has(`${life.kind}:${life.record.id}`) ? 0 : 1,
      });
    }
  }
  return out;
}

/** JSON type of a custom field value by the documented rules (an independent reading). */
function typeOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return 'number';
  if (typeof v !== 'string') return 'text';
  if (/^\d{4}-\d{2}-\d{2}$/.test(v) && new Date(`${v}T00:00:00Z`).toISOString().startsWith(v)) return 'date';
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?(Z|[+-]\d{2}:\d{2})$/.test(v) && !Number.isNaN(Date.parse(v))) return 'timestamp';
  return 'text';
}

/** Each key's column type over every value the snapshots show (a type only ever widens to text). */
export function customFieldTypes(kind: Kind, snapshots: readonly Truth[]): Map<string, string> {
  const out = new Map<string, string | null>();
  for (const truth of snapshots)
    for (const r of (kind === 'ticket' ? truth.tickets : truth.deals) as Rec[])
      for (const [k, v] of Object.entries(r.fields ?? {})) {
        const t = typeOf(v);
        const before = out.get(k) ?? null;
        out.set(k, before === null ? t : t === null || t === before ? before : 'text');
      }
  return new Map([...out].filter((e): e is [string, string] => e[1] !== null));
}

/** The custom field rows of the live records of `truth`, values as the mirror's rows() give them. */
export function customFieldRows(kind: Kind, truth: Truth, types: ReadonlyMap<string, string>): Rec[] {
  const cast = (v: unknown, type: string) => {
    if (v === null || v === undefined) return null;
    if (type === 'boolean') return v ? 1 : 0;
    if (type === 'timestamp') return new Date(v as string).toISOString();
    if (type === 'text') return typeof v === 'string' ? v : JSON.stringify(v);
    return v;
  };
  return ((kind === 'ticket' ? truth.tickets : truth.deals) as Rec[]).map((r) => ({
    id: r.id,
    ...Object.fromEntries([...types].map(([k, type]) => [k, cast(r.fields?.[k], type)])),
  }));
}

/** A mirror row's value in the oracle's form: dates as yyyy-mm-dd, whatever the driver gives. */
const plain = (v: unknown) => (v instanceof Date ? v.toISOString().slice(0, 10) : v);

/** The mirror's rows of a table, each as JSON of the given columns (plus its id as `id`), sorted. */
export async function mirrorRows(
  store: Store,
  table: string,
  idColumn: string,
  columns: readonly string[],
  kind?: Kind,
): Promise<string[]> {
  return (await rows(store, `SELECT * FROM ${table}`))
    .map((r) => JSON.stringify({ ...(kind ? { kind } : {}), id: r[idColumn], ...Object.fromEntries(columns.map((c) => [c, plain(r[c])])) }))
    .sort();
}

/** The oracle's rows as JSON of the same columns, sorted. */
export const oracleJson = (list: readonly Rec[], columns: readonly string[], withKind: boolean): string[] =>
  list
    .map((r) => JSON.stringify({ ...(withKind ? { kind: r.kind } : {}), id: r.id, ...Object.fromEntries(columns.map((c) => [c, r[c]])) }))
    .sort();

export const TRACKED_COLUMNS: Record<Kind, readonly string[]> = {
  ticket: Object.keys(FIELDS.ticket),
  deal: Object.keys(FIELDS.deal),
};

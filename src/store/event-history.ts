import type { Kysely } from 'kysely';
import type { MirrorDatabase } from './schema.js';
import type { EventChange } from './history.js';
import { centsText, chunks, parseAmount, str } from './values.js';
import { stageKey } from './reads.js';

type Db = Kysely<MirrorDatabase>;

/** A stored event as events.ts has converted it (occurredAt in the stored form). */
export interface StoredEvent {
  id: string;
  type: string | null;
  entityId: string | null;
  payload: unknown;
  at: string;
}

type Convert = (v: unknown) => string | null | undefined;

/** A scalar id or label; undefined (not usable) for objects, arrays and booleans. */
const scalar: Convert = (v) => (v === null ? null : typeof v === 'string' || typeof v === 'number' ? str(v) : undefined);
/** Exact decimal text, as deal history keeps amounts; undefined when not a decimal. */
const amount: Convert = (v) => {
  try {
    return centsText(parseAmount(v).cents);
  } catch {
    return undefined;
  }
};

/**
 * Which event tells which history field, and where in its payload (docs/sync.md, "History").
 * `path` null: the payload itself is `{from, to}`; otherwise the payload holds `{<path>: {from, to}}`
 * (the simulator's `*.updated` events list every changed field that way).
 */
const RULES: readonly { type: string; kind: 'ticket' | 'deal'; path: string | null; field: string; convert: Convert }[] = [
  { type: 'ticket.status_changed', kind: 'ticket', path: null, field: 'status', convert: scalar },
  { type: 'ticket.priority_changed', kind: 'ticket', path: null, field: 'priority', convert: scalar },
  { type: 'ticket.assigned', kind: 'ticket', path: null, field: 'assignee_id', convert: scalar },
  { type: 'ticket.updated', kind: 'ticket', path: 'teamId', field: 'team_id', convert: scalar },
  { type: 'ticket.updated', kind: 'ticket', path: 'priority', field: 'priority', convert: scalar },
  { type: 'ticket.updated', kind: 'ticket', path: 'assigneeId', field: 'assignee_id', convert: scalar },
  { type: 'ticket.updated', kind: 'ticket', path: 'status', field: 'status', convert: scalar },
  { type: 'deal.stage_changed', kind: 'deal', path: null, field: 'stage_id', convert: scalar },
  { type: 'deal.updated', kind: 'deal', path: 'amount', field: 'amount', convert: amount },
  { type: 'deal.updated', kind: 'deal', path: 'closeDate', field: 'close_date', convert: scalar },
  { type: 'deal.updated', kind: 'deal', path: 'ownerId', field: 'owner_id', convert: scalar },
  { type: 'deal.updated', kind: 'deal', path: 'status', field: 'status', convert: scalar },
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{from, to}` with both keys present and both convertible, else null: such an event adds no row. */
function fromTo(v: unknown, convert: Convert): { from: string | null; to: string | null } | null {
  if (!isObject(v) || !('from' in v) || !('to' in v)) return null;
  const from = convert(v.from);
  const to = convert(v.to);
  if (from === undefined || to === undefined || from === to) return null;
  return { from, to };
}

/**
 * The history rows the given (new) events tell. A deal's stage move also tells its status when
 * the two stages' categories differ (won / lost / open, from the stages table), because upstream
 * derives a deal's status from its stage and logs no event of its own for it.
 */
export async function changesFromEvents(db: Db, events: readonly StoredEvent[]): Promise<EventChange[]> {
  const out: EventChange[] = [];
  const stageMoves: EventChange[] = [];
  for (const e of events) {
    if (e.entityId === null) continue;
    for (const rule of RULES) {
      if (rule.type !== e.type) continue;
      const part = rule.path === null ? e.payload : isObject(e.payload) ? e.payload[rule.path] : undefined;
      const ft = fromTo(part, rule.convert);
      if (!ft) continue;
      const change = { kind: rule.kind, eventId: e.id, entityId: e.entityId, field: rule.field, ...ft, at: e.at };
      out.push(change);
      if (rule.field === 'stage_id') stageMoves.push(change);
    }
  }
  if (stageMoves.length > 0) out.push(...(await statusFromStageMoves(db, stageMoves)));
  return out;
}

/**
 * A stage id names a stage of the deal's own pipeline: two pipelines may share one (migration
 * 0700_owner_keyed_children). The deal's pipeline comes from the mirror; a deal it does not hold
 * yet takes the stage of that id only when a single pipeline has one, and otherwise the move tells
 * no status (the re-read observes it).
 */
async function statusFromStageMoves(db: Db, moves: readonly EventChange[]): Promise<EventChange[]> {
  const ids = [...new Set(moves.flatMap((m) => [m.from, m.to]).filter((v): v is string => v !== null))];
  const dealIds = [...new Set(moves.map((m) => m.entityId))];
  const stages = [];
  for (const batch of chunks(ids, 500)) {
    stages.push(...(await db.selectFrom('stages').select(['pipeline_id', 'id', 'is_won', 'is_lost']).where('id', 'in', batch).execute()));
  }
  const pipelineOf = new Map<string, string>();
  for (const batch of chunks(dealIds, 500)) {
    const rows = await db.selectFrom('deals').select(['id', 'pipeline_id']).where('id', 'in', batch).execute();
    for (const r of rows) if (r.pipeline_id !== null) pipelineOf.set(r.id, r.pipeline_id);
  }
  const category = new Map<string, string>();
  const pipelinesOf = new Map<string, string[]>();
  for (const s of stages) {
    const c = Number(s.is_won) === 1 || s.is_won === true ? 'won' : Number(s.is_lost) === 1 || s.is_lost === true ? 'lost' : 'open';
    category.set(stageKey(s.pipeline_id, s.id), c);
    pipelinesOf.set(s.id, [...(pipelinesOf.get(s.id) ?? []), s.pipeline_id]);
  }
  const categoryOf = (dealId: string, stageId: string | null): string | undefined => {
    if (stageId === null) return undefined;
    const only = pipelinesOf.get(stageId);
    const pipeline = pipelineOf.get(dealId) ?? (only?.length === 1 ? only[0] : undefined);
    return pipeline === undefined ? undefined : category.get(stageKey(pipeline, stageId));
  };
  const out: EventChange[] = [];
  for (const m of moves) {
    const from = categoryOf(m.entityId, m.from);
    const to = categoryOf(m.entityId, m.to);
    // An unknown stage tells nothing; the next re-read observes the status if it changed.
    if (from === undefined || to === undefined || from === to) continue;
    out.push({ ...m, field: 'status', from, to });
  }
  return out;
}

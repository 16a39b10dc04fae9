import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { fromDbTimestamp } from '../../src/util/time.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Row = Record<string, any>;
type Rec = Record<string, any>;

/**
 * The oracle of the scenario tests: compares every mirrored table with the simulator's ground
 * truth, reading both through plain SQL and the API's JSON shapes, independently of the store's
 * own mapping code. Returns the list of differences (empty when the mirror is exact).
 */
export async function diffMirror(db: Kysely<any>, truth: Rec, options: { lookbackSeconds?: number } = {}): Promise<string[]> {
  const diffs: string[] = [];
  // Stored times are zone-less UTC text (docs/schema.md); never let Date read them as local time.
  const ts = (v: unknown) => (v === null || v === undefined ? null : fromDbTimestamp(v as string));
  const eq = (what: string, mirror: unknown, upstream: unknown) => {
    if (JSON.stringify(mirror) !== JSON.stringify(upstream))
      diffs.push(`${what}: mirror ${JSON.stringify(mirror)} != truth ${JSON.stringify(upstream)}`);
  };
  const bool = (v: unknown) => v === 1 || v === true;
  const all = async (q: string) => (await sql.raw<Row>(q).execute(db)).rows;

  // Tickets, their tags, fields and messages.
  const tickets = new Map((await all('select * from tickets')).map((r) => [r.id, r]));
  const tags = groupBy(await all('select ticket_id, tag from ticket_tags'), 'ticket_id');
  const fields = groupBy(await all('select ticket_id, key, value_json from ticket_fields'), 'ticket_id');
  const messages = groupBy(await all('select * from ticket_messages'), 'ticket_id');
  const listed = new Set<string>();
  for (const t of truth.tickets as Rec[]) {
    listed.add(t.id);
    const row = tickets.get(t.id);
    if (!row) {
      diffs.push(`ticket ${t.id} missing`);
      continue;
    }
    const w = `ticket ${t.id}`;
    eq(`${w} deleted_at`, row.deleted_at, null);
    eq(`${w} number`, Number(row.number), t.number);
    eq(`${w} key`, row.key, t.key);
    eq(`${w} subject`, row.subject, t.subject);
    eq(`${w} status`, row.status, t.status);
    eq(`${w} priority`, row.priority, t.priority);
    eq(`${w} summary`, row.summary, t.summary ?? null);
    eq(`${w} contact_id`, row.contact_id, t.contact?.id ?? null);
    eq(`${w} assignee_id`, row.assignee_id, t.assignee?.id ?? null);
    eq(`${w} team_id`, row.team_id ?? null, (t.team as Rec | null)?.id ?? null);
    eq(`${w} message_count`, Number(row.message_count), t.messageCount);
    for (const [col, v] of [
      ['first_reply_due_at', t.sla?.firstReplyDueAt],
      ['resolve_due_at', t.sla?.resolveDueAt],
      ['first_reply_breached_at', t.sla?.firstReplyBreachedAt],
      ['resolve_breached_at', t.sla?.resolveBreachedAt],
      ['first_agent_reply_at', t.firstAgentReplyAt],
      ['resolved_at', t.resolvedAt],
      ['status_changed_at', t.statusChangedAt],
      ['created_at', t.createdAt],
      ['updated_at', t.updatedAt],
    ] as const) {
      eq(`${w} ${col}`, ts(row[col]), ts(v));
    }
    eq(`${w} tags`, (tags.get(t.id) ?? []).map((r) => r.tag).sort(), [...(t.tags ?? [])].sort());
    const f = Object.fromEntries((fields.get(t.id) ?? []).map((r) => [r.key, parseJson(r.value_json)]));
    eq(`${w} fields`, sortKeys(f), sortKeys(t.fields ?? {}));
    const mine = new Map((messages.get(t.id) ?? []).map((m) => [m.id, m]));
    eq(`${w} message ids`, [...mine.keys()].sort(), (t.messages as Rec[]).map((m) => m.id).sort());
    for (const m of t.messages as Rec[]) {
      const r = mine.get(m.id);
      if (!r) continue;
      eq(`message ${m.id} body`, r.body, m.body);
      eq(`message ${m.id} is_internal`, bool(r.is_internal), m.isInternal);
      eq(`message ${m.id} author_type`, r.author_type, m.authorType);
      eq(`message ${m.id} author_id`, r.author_id, m.author?.id ?? null);
      eq(`message ${m.id} created_at`, ts(r.created_at), ts(m.createdAt));
    }
  }
  const hidden = new Set((truth.hiddenTickets as Rec[]).map((h) => h.id));
  for (const [id, row] of tickets) {
    if (listed.has(id)) continue;
    if (row.deleted_at === null) diffs.push(`ticket ${id} is live in the mirror but ${hidden.has(id) ? 'hidden' : 'absent'} upstream`);
  }

  // Deals with contacts and fields.
  const deals = new Map((await all('select * from deals')).map((r) => [r.id, r]));
  const dealContacts = groupBy(await all('select * from deal_contacts'), 'deal_id');
  const dealFields = groupBy(await all('select deal_id, key, value_json from deal_fields'), 'deal_id');
  const liveDeals = new Set<string>();
  for (const d of truth.deals as Rec[]) {
    liveDeals.add(d.id);
    const row = deals.get(d.id);
    if (!row) {
      diffs.push(`deal ${d.id} missing`);
      continue;
    }
    const w = `deal ${d.id}`;
    eq(`${w} deleted_at`, row.deleted_at, null);
    eq(`${w} name`, row.name, d.name);
    eq(`${w} amount`, row.amount === null ? null : Number(row.amount).toFixed(2), d.amount);
    eq(
      `${w} amount_cents`,
      row.amount_cents === null ? null : Number(row.amount_cents),
      d.amount === null ? null : Math.round(Number(d.amount) * 100),
    );
    eq(`${w} currency`, row.currency, d.currency);
    eq(
      `${w} close_date`,
      row.close_date === null ? null : String(row.close_date instanceof Date ? row.close_date.toISOString().slice(0, 10) : row.close_date),
      d.closeDate,
    );
    eq(`${w} status`, row.status, d.status);
    eq(`${w} pipeline_id`, row.pipeline_id, d.pipeline.id);
    eq(`${w} stage_id`, row.stage_id, d.stage.id);
    eq(`${w} owner_id`, row.owner_id, d.owner?.id ?? null);
    eq(`${w} company_id`, row.company_id, d.company?.id ?? null);
    eq(`${w} updated_at`, ts(row.updated_at), ts(d.updatedAt));
    const contacts = (dealContacts.get(d.id) ?? []).map((c) => [c.contact_id, bool(c.is_primary)]).sort();
    eq(`${w} contacts`, contacts, (d.contacts as Rec[]).map((c) => [c.id, c.isPrimary]).sort());
    const f = Object.fromEntries((dealFields.get(d.id) ?? []).map((r) => [r.key, parseJson(r.value_json)]));
    eq(`${w} fields`, sortKeys(f), sortKeys(d.fields ?? {}));
  }
  for (const [id, row] of deals) {
    if (!liveDeals.has(id) && row.deleted_at === null) diffs.push(`deal ${id} is live in the mirror but deleted upstream`);
  }

  // Pipelines and stages.
  const pipelines = new Map((await all('select * from pipelines')).map((r) => [r.id, r]));
  // A stage id names a stage within its pipeline (migration 0700_owner_keyed_children).
  const stages = new Map((await all('select * from stages')).map((r) => [`${r.pipeline_id}\u0000${r.id}`, r]));
  for (const p of truth.pipelines as Rec[]) {
    const row = pipelines.get(p.id);
    if (!row) {
      diffs.push(`pipeline ${p.id} missing`);
      continue;
    }
    eq(`pipeline ${p.id} name`, row.name, p.name);
    eq(`pipeline ${p.id} deal_count`, Number(row.deal_count), p.dealCount);
    for (const s of p.stages as Rec[]) {
      const st = stages.get(`${p.id}\u0000${s.id}`);
      if (!st) {
        diffs.push(`stage ${s.id} missing`);
        continue;
      }
      eq(
        `stage ${s.id}`,
        [st.pipeline_id, st.name, Number(st.position), bool(st.is_won), bool(st.is_lost)],
        [p.id, s.name, s.position, s.isWon, s.isLost],
      );
    }
  }

  // Every visible event exactly once (the primary key makes "once" structural; check the sets).
  // The mirror owes the change log from its first window on: backfill handover minus the lookback
  // (all of it after a history backfill).
  const state = (await all("select value_json from sync_state where key = 'backfill'"))[0];
  const backfill = state ? (JSON.parse(state.value_json as string) as Rec) : null;
  const owedFrom =
    backfill && backfill.history === 'none' && backfill.handover
      ? Date.parse(backfill.handover as string) - (options.lookbackSeconds ?? 300) * 1000
      : Number.NEGATIVE_INFINITY;
  const eventIds = (await all('select id from events')).map((r) => r.id as string);
  const truthIds = new Set(
    (truth.events as Rec[]).filter((e) => Date.parse(e.occurredAt as string) >= owedFrom).map((e) => e.id as string),
  );
  const allTruthIds = new Set((truth.events as Rec[]).map((e) => e.id as string));
  const mine = new Set(eventIds);
  if (mine.size !== eventIds.length) diffs.push('duplicate event ids in the mirror');
  const missing = [...truthIds].filter((id) => !mine.has(id));
  const extra = [...mine].filter((id) => !allTruthIds.has(id));
  if (missing.length) diffs.push(`${missing.length} events missing, e.g. ${missing.slice(0, 3).join(', ')}`);
  if (extra.length) diffs.push(`${extra.length} events not upstream, e.g. ${extra.slice(0, 3).join(', ')}`);
  return diffs;
}

function groupBy(rows: Row[], key: string): Map<string, Row[]> {
  const out = new Map<string, Row[]>();
  for (const r of rows) {
    const k = r[key] as string;
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

function parseJson(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

function sortKeys(o: Rec): Rec {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

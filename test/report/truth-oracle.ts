/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Truth } from '../../src/simulator/index.js';
import { changesOf, unreadableRecords, type Kind } from '../helpers/truth-history.js';
import { DAY, MIN, percentileCont } from './oracle.js';

/**
 * The reporting figures computed in plain JS from the simulator's ground truth (its records and
 * canonical change list, `truth.changes`, whatever the dialect spells in its log), independently of
 * the mirror and of the refresh SQL. Definitions follow docs/bi.md. A record whose changes the log
 * hides (test/helpers/truth-history.ts) gets `history_complete: 0`; only the figures that use no
 * history (`HISTORY_FREE`) are then known.
 */
type Rec = Record<string, any>;
const RESOLVED = new Set(['solved', 'closed']);
const day = (iso: string) => iso.slice(0, 10);
const ms = (iso: string) => Date.parse(iso);
const mins = (a: string, b: string) => (ms(b) - ms(a)) / MIN;
const cents = (amount: string | null) => (amount === null ? null : Math.round(Number(amount) * 100));

/** One record's changes of one field, oldest first, as `{occurredAt, from, to}` (canonical, whatever the dialect). */
function changes(truth: Rec, kind: Kind, id: string, field: string): Rec[] {
  return changesOf(truth as Truth, kind, id, field);
}

/** The value held at `at`: last change at or before it, else the first change's from, else `current`. */
function valueAt(moves: Rec[], at: string, current: unknown): unknown {
  const before = moves.filter((c) => ms(c.occurredAt) <= ms(at));
  if (before.length > 0) return before.at(-1)!.to;
  return moves.length > 0 ? moves[0]!.from : current;
}

/** 1 when a client can know the record's whole tracked history, else 0. */
function completeness(truth: Rec): (kind: Kind, id: string) => number {
  const hidden = unreadableRecords(truth as Truth);
  return (kind, id) => (hidden.has(`${kind}:${id}`) ? 0 : 1);
}

export function ticketFigures(truth: Rec, now: string) {
  const complete = completeness(truth);
  const tickets: Rec[] = [];
  const intervals: Rec[] = [];
  for (const t of truth.tickets as Rec[]) {
    const moves = changes(truth, 'ticket', t.id, 'status');
    const assigned = changes(truth, 'ticket', t.id, 'assigneeId');
    const stays: Rec[] = [{ status: moves[0]?.from ?? t.status, from: t.createdAt }];
    for (const m of moves) stays.push({ status: m.to, from: m.occurredAt });
    stays.forEach((s, i) => {
      const prev = stays[i - 1];
      const next = stays[i + 1];
      intervals.push({
        ticket_id: t.id,
        seq: i + 1,
        status: s.status,
        valid_from: s.from,
        valid_to: next?.from ?? null,
        minutes: next ? mins(s.from, next.from) : null,
        is_resolution: Number(!!prev && RESOLVED.has(s.status) && !RESOLVED.has(prev.status)),
        is_reopen: Number(!!prev && !RESOLVED.has(s.status) && RESOLVED.has(prev.status)),
        assignee_id: valueAt(assigned, s.from, t.assignee?.id ?? null),
        _complete: complete('ticket', t.id),
      });
    });
    const res = intervals.filter((i) => i.ticket_id === t.id && i.is_resolution === 1).map((i) => i.valid_from);
    const resolved = RESOLVED.has(t.status);
    const msgs = t.messages as Rec[];
    const par = msgs.filter((m) => m.authorType === 'agent' && !m.isInternal).length;
    const reply = t.firstAgentReplyAt;
    const sla = t.sla;
    const fullRes = resolved ? (res.at(-1) ?? null) : null;
    const frSla =
      !sla.firstReplyDueAt && !sla.firstReplyBreachedAt
        ? 'none'
        : sla.firstReplyBreachedAt || (reply && reply > sla.firstReplyDueAt)
          ? 'breached'
          : reply
            ? 'achieved'
            : resolved
              ? 'none'
              : now > sla.firstReplyDueAt
                ? 'breached'
                : 'active';
    const resSla =
      !sla.resolveDueAt && !sla.resolveBreachedAt
        ? 'none'
        : sla.resolveBreachedAt
          ? 'breached'
          : resolved
            ? fullRes > sla.resolveDueAt
              ? 'breached'
              : 'achieved'
            : now > sla.resolveDueAt
              ? 'breached'
              : 'active';
    tickets.push({
      ticket_id: t.id,
      status: t.status,
      assignee_id: t.assignee?.id ?? null,
      tags: [...t.tags].sort().join(',') || null,
      first_reply_minutes: reply ? mins(t.createdAt, reply) : null,
      first_resolution_minutes: res[0] ? mins(t.createdAt, res[0]) : null,
      full_resolution_minutes: fullRes ? mins(t.createdAt, fullRes) : null,
      reopen_count: intervals.filter((i) => i.ticket_id === t.id && i.is_reopen === 1).length,
      public_agent_replies: par,
      internal_notes: msgs.filter((m) => m.isInternal).length,
      customer_messages: msgs.filter((m) => !m.isInternal && m.authorType !== 'agent' && m.authorType !== 'system').length,
      is_one_touch: Number(resolved && par === 1),
      first_reply_sla: frSla,
      first_reply_sla_at: frSla === 'achieved' ? reply : frSla === 'breached' ? (sla.firstReplyBreachedAt ?? sla.firstReplyDueAt) : null,
      resolve_sla: resSla,
      resolve_sla_at: resSla === 'achieved' ? fullRes : resSla === 'breached' ? (sla.resolveBreachedAt ?? sla.resolveDueAt) : null,
      age_minutes: resolved ? null : Math.trunc(mins(t.createdAt, now)),
      history_complete: complete('ticket', t.id),
      _created: t.createdAt,
      _reply: reply,
      _fullRes: fullRes,
    });
  }
  return { tickets, intervals };
}

export function supportDaily(truth: Rec, now: string) {
  const { tickets, intervals } = ticketFigures(truth, now);
  const first = tickets.map((t) => day(t._created)).sort()[0] as string;
  const out: Rec[] = [];
  for (let d = first; d <= day(now); d = new Date(ms(`${d}T00:00:00.000Z`) + DAY).toISOString().slice(0, 10)) {
    const end = ms(`${d}T00:00:00.000Z`) + DAY;
    const backlog = tickets.filter((t) => {
      const stays = intervals.filter((i) => i.ticket_id === t.ticket_id && ms(i.valid_from) < end);
      return stays.length > 0 && !RESOLVED.has(stays.at(-1)!.status);
    }).length;
    const replies = tickets.filter((t) => t._reply && day(t._reply) === d).map((t) => t.first_reply_minutes as number);
    const count = (kind: string, value: string) =>
      tickets.filter((t) => t[kind] === value && t[`${kind}_at`] && day(t[`${kind}_at`]) === d).length;
    const fa = count('first_reply_sla', 'achieved');
    const fb = count('first_reply_sla', 'breached');
    const ra = count('resolve_sla', 'achieved');
    const rb = count('resolve_sla', 'breached');
    out.push({
      day: d,
      created: tickets.filter((t) => day(t._created) === d).length,
      solved: intervals.filter((i) => i.is_resolution === 1 && day(i.valid_from) === d).length,
      reopened: intervals.filter((i) => i.is_reopen === 1 && day(i.valid_from) === d).length,
      backlog,
      first_replies: replies.length,
      first_reply_median_minutes: percentileCont(replies, 0.5),
      first_reply_p90_minutes: percentileCont(replies, 0.9),
      first_reply_sla_achieved: fa,
      first_reply_sla_breached: fb,
      resolve_sla_achieved: ra,
      resolve_sla_breached: rb,
      sla_achieved: fa + ra,
      sla_breached: fb + rb,
    });
  }
  return out;
}

export function agentDaily(truth: Rec, now: string) {
  const { tickets, intervals } = ticketFigures(truth, now);
  const rows = new Map<string, Rec>();
  const row = (agent: string, d: string) => {
    const k = `${agent}|${d}`;
    if (!rows.has(k))
      rows.set(k, {
        agent_id: agent,
        day: d,
        public_replies: 0,
        internal_notes: 0,
        touched: new Set(),
        tickets_solved: 0,
        one_touch_solves: 0,
      });
    return rows.get(k) as Rec;
  };
  for (const t of truth.tickets as Rec[]) {
    for (const m of t.messages as Rec[]) {
      if (m.authorType !== 'agent') continue;
      const r = row(m.author.id, day(m.createdAt));
      if (m.isInternal) r.internal_notes++;
      else r.public_replies++;
      r.touched.add(t.id);
    }
  }
  for (const i of intervals.filter((x) => x.is_resolution === 1 && x.assignee_id)) {
    const r = row(i.assignee_id, day(i.valid_from));
    r.tickets_solved++;
    const t = tickets.find((x) => x.ticket_id === i.ticket_id) as Rec;
    if (t.is_one_touch === 1 && t._fullRes === i.valid_from) r.one_touch_solves++;
  }
  return [...rows.values()]
    .map(({ touched, ...r }): Rec => ({ ...r, tickets_touched: touched.size }))
    .sort((a, b) => (a.agent_id + a.day < b.agent_id + b.day ? -1 : 1));
}

export function dealFigures(truth: Rec, now: string) {
  const complete = completeness(truth);
  const stages = new Map<string, Rec>();
  for (const p of truth.pipelines as Rec[]) for (const s of p.stages) stages.set(s.id, { ...s, pipelineId: p.id });
  const deals: Rec[] = [];
  const intervals: Rec[] = [];
  for (const d of truth.deals as Rec[]) {
    const moves = changes(truth, 'deal', d.id, 'stageId');
    const stays = [{ stage: moves[0]?.from ?? d.stage.id, at: d.createdAt }, ...moves.map((m) => ({ stage: m.to, at: m.occurredAt }))];
    stays.forEach((s, i) => {
      const next = stays[i + 1];
      const prevPos = i > 0 ? stages.get(stays[i - 1]!.stage)?.position : undefined;
      const pos = stages.get(s.stage)?.position;
      intervals.push({
        deal_id: d.id,
        seq: i + 1,
        stage_id: s.stage,
        entered_at: s.at,
        exited_at: next?.at ?? null,
        minutes: next ? mins(s.at, next.at) : null,
        direction: i === 0 ? null : pos >= prevPos ? 'forward' : 'back',
        _complete: complete('deal', d.id),
      });
    });
    const mine = intervals.filter((i) => i.deal_id === d.id);
    const wonAt = mine.find((i) => stages.get(i.stage_id)?.isWon)?.entered_at ?? null;
    const lostAt = mine.find((i) => stages.get(i.stage_id)?.isLost)?.entered_at ?? null;
    const closedAt = d.status === 'won' ? wonAt : d.status === 'lost' ? lostAt : null;
    deals.push({
      deal_id: d.id,
      status: d.status,
      stage_id: d.stage.id,
      amount_cents: cents(d.amount),
      currency: d.currency,
      owner_id: d.owner?.id ?? null,
      won_at: wonAt,
      lost_at: lostAt,
      closed_at: closedAt,
      stage_entered_at: mine.at(-1)!.entered_at,
      days_open: d.status === 'open' ? Math.trunc(mins(d.createdAt, now)) / 1440 : null,
      days_to_close: closedAt ? (ms(closedAt) - ms(d.createdAt)) / DAY : null,
      history_complete: complete('deal', d.id),
      _pipeline: d.pipeline.id,
      _created: d.createdAt,
    });
  }
  return { deals, intervals };
}

export function salesAggregates(truth: Rec, now: string) {
  const { deals } = dealFigures(truth, now);
  const stagesOut = new Map<string, Rec>();
  for (const d of deals.filter((x) => x.status === 'open')) {
    const k = `${d._pipeline}|${d.stage_id}|${d.currency}`;
    const r = stagesOut.get(k) ?? {
      pipeline_id: d._pipeline,
      stage_id: d.stage_id,
      currency: d.currency,
      open_deals: 0,
      total_amount_cents: null,
      ageMs: 0,
    };
    r.open_deals++;
    if (d.amount_cents !== null) r.total_amount_cents = (r.total_amount_cents ?? 0) + d.amount_cents;
    r.ageMs += ms(now) - ms(d.stage_entered_at);
    stagesOut.set(k, r);
  }
  const monthly = new Map<string, Rec>();
  const m = (month: string, d: Rec) => {
    const k = `${month}|${d._pipeline}|${d.owner_id}|${d.currency}`;
    if (!monthly.has(k))
      monthly.set(k, {
        month: `${month}-01`,
        pipeline_id: d._pipeline,
        owner_id: d.owner_id,
        currency: d.currency,
        deals_created: 0,
        won_count: 0,
        won_amount_cents: 0,
        lost_count: 0,
        lost_amount_cents: 0,
        wonMs: 0,
        wonWithAmount: 0,
        lostWithAmount: 0,
      });
    return monthly.get(k) as Rec;
  };
  for (const d of deals) {
    m(d._created.slice(0, 7), d).deals_created++;
    if (d.status === 'won' && d.won_at) {
      const r = m(d.won_at.slice(0, 7), d);
      r.won_count++;
      r.won_amount_cents += d.amount_cents ?? 0;
      r.wonWithAmount += d.amount_cents === null ? 0 : 1;
      r.wonMs += ms(d.won_at) - ms(d._created);
    }
    if (d.status === 'lost' && d.lost_at) {
      const r = m(d.lost_at.slice(0, 7), d);
      r.lost_count++;
      r.lost_amount_cents += d.amount_cents ?? 0;
      r.lostWithAmount += d.amount_cents === null ? 0 : 1;
    }
  }
  return {
    pipelineStages: [...stagesOut.values()].map(({ ageMs, ...r }) => ({ ...r, avg_days_in_stage: ageMs / r.open_deals / DAY })),
    monthly: [...monthly.values()].map(({ wonMs, wonWithAmount, lostWithAmount, ...r }) => {
      // Deals won (lost) but none with an amount: the value is unknown, NULL (docs/schema.md).
      const won = r.won_count > 0 && wonWithAmount === 0 ? null : r.won_amount_cents;
      const lost = r.lost_count > 0 && lostWithAmount === 0 ? null : r.lost_amount_cents;
      return {
        ...r,
        won_amount_cents: won,
        lost_amount_cents: lost,
        win_rate_count: r.won_count + r.lost_count > 0 ? r.won_count / (r.won_count + r.lost_count) : null,
        win_rate_value: won !== null && lost !== null && won + lost > 0 ? won / (won + lost) : null,
        avg_won_amount: wonWithAmount > 0 ? r.won_amount_cents / wonWithAmount / 100 : null,
        avg_days_to_close: r.won_count > 0 ? wonMs / r.won_count / DAY : null,
      };
    }),
  };
}

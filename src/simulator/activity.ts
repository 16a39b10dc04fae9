import { priorityValues, SENTENCES, settableStatuses, SUBJECTS, TAGS } from './catalog.js';
import { createDeal, deleteDeal, updateDeal } from './deal-ops.js';
import { iso } from './clock.js';
import type { Deal, Ticket } from './model.js';
import { runAutomations } from './ticket-lifecycle.js';
import { addMessage, createTicket, updateTicket } from './ticket-ops.js';
import type { ActivityRecord } from './types.js';
import type { World } from './world.js';

/**
 * Random writes for live activity, act() and burst(). Each goes through the same operation
 * functions as the HTTP handlers, with request-shaped inputs, so it logs the same events.
 */

export const ACTIVITY_KINDS = [
  'create_ticket',
  'update_ticket',
  'change_status',
  'reply',
  'add_note',
  'change_tags',
  'create_deal',
  'move_deal_stage',
  'change_amount',
  'delete_deal',
] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

const WEIGHTS: Record<ActivityKind, number> = {
  create_ticket: 0.12,
  update_ticket: 0.1,
  change_status: 0.12,
  reply: 0.2,
  add_note: 0.1,
  change_tags: 0.08,
  create_deal: 0.06,
  move_deal_stage: 0.1,
  change_amount: 0.08,
  delete_deal: 0.04,
};

function pickKind(world: World): ActivityKind {
  let r = world.activityRng.next();
  for (const k of ACTIVITY_KINDS) if ((r -= WEIGHTS[k]) < 0) return k;
  return 'reply';
}

function randomTicket(world: World, openOnly: boolean): Ticket | undefined {
  const list = world.ticketList;
  for (let tries = 0; tries < 30 && list.length > 0; tries++) {
    const t = list[Math.floor(world.activityRng.next() * list.length)];
    if (t && t.hidden === null && (!openOnly || t.status !== 'closed')) return t;
  }
  return undefined;
}

function randomDeal(world: World): Deal | undefined {
  const list = world.dealList;
  for (let tries = 0; tries < 30 && list.length > 0; tries++) {
    const d = list[Math.floor(world.activityRng.next() * list.length)];
    if (d && !d.deleted) return d;
  }
  return undefined;
}

function sentence(world: World): string {
  return world.activityRng.pick(SENTENCES);
}

type TicketChange = 'update_ticket' | 'change_status' | 'reply' | 'add_note' | 'change_tags';
type DealChange = 'move_deal_stage' | 'change_amount' | 'delete_deal';

function isTicketChange(kind: ActivityKind): kind is TicketChange {
  return kind === 'update_ticket' || kind === 'change_status' || kind === 'reply' || kind === 'add_note' || kind === 'change_tags';
}

function isDealChange(kind: ActivityKind): kind is DealChange {
  return kind === 'move_deal_stage' || kind === 'change_amount' || kind === 'delete_deal';
}

/** What a write did: its kind, its record, and the record's updatedAt once written. */
const record = (kind: string, entityType: 'ticket' | 'deal', r: Ticket | Deal): ActivityRecord => ({
  kind,
  entityType,
  entityId: r.id,
  updatedAt: iso(r.updatedAtMs),
});

/**
 * Performs one write of `kind`; falls back to a create when no suitable record exists. The random
 * draws happen in a fixed order (actor, then the record, then the kind's own), so a seed replays.
 */
export function performActivity(world: World, kind: ActivityKind, strict = false): ActivityRecord {
  const actor = world.activityRng.pick(world.memberList).id;
  runAutomations(world);
  if (isTicketChange(kind)) {
    const ticket = randomTicket(world, true);
    if (!ticket) return performActivity(world, 'create_ticket');
    return record(kind, 'ticket', changeTicket(world, kind, actor, ticket));
  }
  if (isDealChange(kind)) {
    const deal = randomDeal(world);
    // Random activity keeps a few deals alive instead of emptying the workspace; actEveryKind (strict) deletes regardless.
    if (!deal || (kind === 'delete_deal' && !strict && world.dealIndex.size < 3)) return performActivity(world, 'create_deal');
    return record(kind, 'deal', changeDeal(world, kind, actor, deal));
  }
  if (kind === 'create_ticket') return record(kind, 'ticket', createTicket(world, actor, newTicketBody(world)));
  return record(kind, 'deal', createDeal(world, actor, newDealBody(world, actor)));
}

/** A create-ticket request body as a new customer would send it. */
function newTicketBody(world: World): Record<string, unknown> {
  const rng = world.activityRng;
  return {
    subject: rng.pick(SUBJECTS),
    body: sentence(world),
    email: `${world.ids.next('c').slice(2, 10)}@customer.example`,
    firstName: 'New',
    lastName: 'Customer',
    priority: rng.pick(priorityValues(world.dialect.unlistedValues)),
    tags: rng.sample(TAGS, rng.int(0, 2)),
  };
}

/** A create-deal request body; some deals have no company and some no amount, as in real pipelines. */
function newDealBody(world: World, actor: string): Record<string, unknown> {
  const rng = world.activityRng;
  const pipeline = rng.pick(world.pipelines);
  const company = rng.chance(0.7) ? rng.pick([...world.companies.values()]) : null;
  return {
    name: `${company?.name ?? 'Direct'} ${rng.pick(['Pilot', 'Seats', 'Renewal', 'Add-on'])}`,
    pipelineId: pipeline.id,
    amount: rng.chance(0.15) ? null : `${rng.int(500, 90_000)}.${String(rng.int(0, 99)).padStart(2, '0')}`,
    currency: rng.pick(['USD', 'EUR', 'GBP']),
    ownerId: actor,
    companyId: company?.id ?? null,
    contactIds: rng.sample(
      world.contactList.slice(0, 500).map((c) => c.id),
      rng.int(0, 2),
    ),
  };
}

/** One change to an open ticket, through the same operations the PATCH and message handlers use. */
function changeTicket(world: World, kind: TicketChange, actor: string, t: Ticket): Ticket {
  const rng = world.activityRng;
  switch (kind) {
    case 'update_ticket': {
      // Every variant is drawn before one is picked, so the draws do not depend on the pick.
      const variants = [
        { priority: rng.pick(priorityValues(world.dialect.unlistedValues).filter((p) => p !== t.priority)) },
        { subject: `${t.subject.replace(/ \(follow-up\)$/, '')} (follow-up)`, summary: sentence(world) },
        { fields: { region: rng.pick(['na', 'emea', 'apac', 'latam']), mrr: rng.int(0, 500) * 10 } },
        { assigneeId: rng.pick(world.memberList.filter((m) => m.id !== t.assigneeId)).id },
        { teamId: t.teamId === null ? rng.pick([...world.teams.keys()]) : null },
      ];
      return updateTicket(world, actor, t.id, rng.pick(variants));
    }
    case 'change_status': {
      const to = rng.pick(settableStatuses(world.dialect.unlistedValues).filter((s) => s !== t.status));
      return updateTicket(world, actor, t.id, { status: to });
    }
    case 'reply':
      return addMessage(world, actor, t.id, { body: sentence(world) }).ticket;
    case 'add_note':
      return addMessage(world, actor, t.id, { body: sentence(world), internal: true }).ticket;
    case 'change_tags': {
      const add = rng.pick(TAGS.filter((x) => !t.tags.includes(x)));
      const remove = t.tags.length > 0 && rng.chance(0.5) ? [rng.pick(t.tags)] : [];
      return updateTicket(world, actor, t.id, { addTags: [add], removeTags: remove });
    }
  }
}

/** One change to a live deal, through the same operations the deal handlers use. */
function changeDeal(world: World, kind: DealChange, actor: string, d: Deal): Deal {
  const rng = world.activityRng;
  switch (kind) {
    case 'move_deal_stage': {
      const pipeline = world.pipelines.find((p) => p.id === d.pipelineId);
      const stage = rng.pick((pipeline?.stages ?? []).filter((s) => s.id !== d.stageId));
      return updateDeal(world, actor, d.id, { stage: stage.id });
    }
    case 'change_amount': {
      const cents = rng.int(500, 150_000) * 100 + rng.int(0, 99);
      const amount = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
      return updateDeal(world, actor, d.id, { amount });
    }
    case 'delete_deal':
      deleteDeal(world, actor, d.id);
      return d;
  }
}

export function actRandomly(world: World, count: number): ActivityRecord[] {
  const out: ActivityRecord[] = [];
  for (let i = 0; i < count; i++) out.push(performActivity(world, pickKind(world)));
  return out;
}

export function actEveryKind(world: World): ActivityRecord[] {
  return ACTIVITY_KINDS.map((k) => performActivity(world, k, true));
}

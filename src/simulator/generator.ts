import { COMPANY_SUFFIXES, COMPANY_WORDS, FIRST_NAMES, LAST_NAMES, OPEN_STAGE_NAMES, PIPELINE_NAMES, TEAM_NAMES } from './catalog.js';
import { changeDrafts } from './change-log.js';
import { generateDeals } from './generate-deals.js';
import { generateTickets } from './generate-tickets.js';
import type { Contact, FieldChange, Pipeline, SimEvent, Stage } from './model.js';
import { Rng } from './random.js';
import type { SimRecordKind } from './types.js';
import type { World } from './world.js';

export const DAY = 86_400_000;

export interface GenerateCounts {
  tickets: number;
  deals: number;
  pipelines: number;
  members: number;
}

/** A history event before it gets its id and sequence number. */
export interface DraftEvent {
  type: string;
  entityType: string;
  entityId: string;
  payload: object;
  actor: string | null;
  ms: number;
  changes?: FieldChange[];
}

export interface GenContext {
  world: World;
  rng: Rng;
  startMs: number;
  drafts: DraftEvent[];
}

/** Drafts the events that log one write's field changes, in the world's dialect, as a live write would log them. */
export function draftChanges(
  ctx: GenContext,
  entity: SimRecordKind,
  entityId: string,
  changes: FieldChange[],
  actor: string | null,
  ms: number,
): void {
  for (const d of changeDrafts(ctx.world, entity, changes)) {
    const draft: DraftEvent = { type: d.type, entityType: entity, entityId, payload: d.payload, actor, ms };
    if (d.changes) draft.changes = d.changes;
    ctx.drafts.push(draft);
  }
}

/**
 * Fills the world with a seeded workspace whose change log is consistent with its records:
 * every seeded ticket and deal has the created, status, reply and stage events that lead to
 * its current state, all before the simulated start time.
 */
export function generateWorkspace(world: World, counts: GenerateCounts, seed: number): void {
  const ctx: GenContext = { world, rng: new Rng(seed), startMs: world.settings.startMs, drafts: [] };
  generatePeople(ctx, counts);
  generatePipelines(ctx, Math.max(1, counts.pipelines));
  generateTickets(ctx, counts.tickets);
  generateDeals(ctx, counts.deals);
  loadEvents(ctx);
}

function generatePeople(ctx: GenContext, counts: GenerateCounts): void {
  const { world, rng } = ctx;
  const usedEmails = new Set<string>();
  const uniqueEmail = (local: string, domain: string): string => {
    let email = `${local}@${domain}`;
    for (let n = 2; usedEmails.has(email); n++) email = `${local}${n}@${domain}`;
    usedEmails.add(email);
    return email;
  };
  for (let i = 0; i < Math.max(1, counts.members); i++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    world.addMember({
      id: world.ids.next('usr'),
      name: `${first} ${last}`,
      email: uniqueEmail(`${first}.${last}`.toLowerCase(), 'workspace.example'),
    });
  }
  const teamCount = Math.min(TEAM_NAMES.length, Math.max(2, Math.ceil(counts.members / 3)));
  for (let i = 0; i < teamCount; i++) {
    const id = world.ids.next('team');
    const name = TEAM_NAMES[i] as string;
    // Shown only by the rich team shape; derived without drawing, so every dialect seeds the same workspace.
    const lead = world.memberList[i % world.memberList.length] as { id: string };
    world.teams.set(id, { id, name, email: `${name.toLowerCase()}@workspace.example`, memberCount: 2 + ((i * 7) % 6), leadId: lead.id });
  }
  const companyCount = Math.max(3, Math.ceil(counts.tickets / 25 + counts.deals / 4));
  const companyIds: string[] = [];
  for (let i = 0; i < companyCount; i++) {
    const word = COMPANY_WORDS[i % COMPANY_WORDS.length] as string;
    const suffix = COMPANY_SUFFIXES[Math.floor(i / COMPANY_WORDS.length) % COMPANY_SUFFIXES.length] as string;
    const round = Math.floor(i / (COMPANY_WORDS.length * COMPANY_SUFFIXES.length));
    const name = `${word} ${suffix}${round > 0 ? ` ${round + 1}` : ''}`;
    const id = world.ids.next('comp');
    world.companies.set(id, { id, name, domain: `${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}.example` });
    companyIds.push(id);
  }
  const contactCount = Math.max(5, Math.ceil(counts.tickets * 0.6 + counts.deals / 2));
  for (let i = 0; i < contactCount; i++) {
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const companyId = rng.chance(0.7) ? rng.pick(companyIds) : null;
    const domain = companyId
      ? (world.companies.get(companyId)?.domain as string)
      : rng.pick(['mail.example', 'inbox.example', 'post.example']);
    const c: Contact = {
      id: world.ids.next('con'),
      firstName: first,
      lastName: last,
      email: uniqueEmail(`${first}.${last}`.toLowerCase(), domain),
      companyId,
    };
    world.addContact(c);
    ctx.drafts.push({
      type: 'contact.created',
      entityType: 'contact',
      entityId: c.id,
      payload: { email: c.email },
      actor: null,
      ms: ctx.startMs - 200 * DAY + Math.floor(rng.next() * 100 * DAY),
    });
  }
}

function generatePipelines(ctx: GenContext, count: number): void {
  const { world, rng } = ctx;
  for (let i = 0; i < count; i++) {
    const id = world.ids.next('pipe');
    const name = i < PIPELINE_NAMES.length ? (PIPELINE_NAMES[i] as string) : `Pipeline ${i + 1}`;
    const p: Pipeline = { id, name, stages: [], dealCount: 0 };
    const openCount = rng.int(2, 5);
    const names = [...OPEN_STAGE_NAMES.slice(0, openCount), 'Won', 'Lost'];
    names.forEach((stageName, position) => {
      const s: Stage = {
        id: world.ids.next('stg'),
        name: stageName,
        position,
        isWon: stageName === 'Won',
        isLost: stageName === 'Lost',
        pipelineId: id,
      };
      p.stages.push(s);
      world.addStage(s);
    });
    world.pipelines.push(p);
  }
}

function loadEvents(ctx: GenContext): void {
  const { world } = ctx;
  const drafts = ctx.drafts;
  // Stable sort keeps the causal order of events drafted for the same millisecond.
  drafts.sort((a, b) => a.ms - b.ms);
  // Drafts become the events themselves: one object per event keeps generation light on the GC.
  const events = drafts as unknown as SimEvent[];
  for (let i = 0; i < drafts.length; i++) {
    const d = drafts[i] as DraftEvent & Partial<SimEvent>;
    d.id = world.ids.next('evt');
    d.seq = i + 1;
    d.occurredAtMs = d.ms;
    d.visibleAtMs = d.ms;
  }
  world.events.loadSorted(events);
  world.seq = drafts.length;
  ctx.drafts = [];
}

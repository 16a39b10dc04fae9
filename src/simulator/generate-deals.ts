import { CURRENCIES } from './catalog.js';
import { stageMovePayload } from './change-log.js';
import { DAY, draftChanges, type GenContext } from './generator.js';
import type { Deal, Stage } from './model.js';

const HOUR = 3_600_000;
const DEAL_WORDS = ['Platform', 'Support plan', 'Seats', 'Renewal', 'Expansion', 'Pilot', 'Add-on', 'Migration'] as const;

/** Deals that were created in their pipeline's first stage and moved forward to where they are now. */
export function generateDeals(ctx: GenContext, count: number): void {
  const { world, rng, startMs } = ctx;
  const members = world.memberList.map((m) => m.id);
  const companies = [...world.companies.values()];
  const contactsByCompany = new Map<string, string[]>();
  for (const c of world.contactList) {
    if (c.companyId === null) continue;
    const list = contactsByCompany.get(c.companyId) ?? [];
    list.push(c.id);
    contactsByCompany.set(c.companyId, list);
  }
  const fallbackContacts = world.contactList.slice(0, 200).map((c) => c.id);
  const all: Deal[] = [];
  for (let i = 0; i < count; i++) {
    const id = world.ids.next('deal');
    const pipeline = rng.pick(world.pipelines);
    const open = pipeline.stages.filter((s) => !s.isWon && !s.isLost);
    const won = pipeline.stages.find((s) => s.isWon) as Stage;
    const lost = pipeline.stages.find((s) => s.isLost) as Stage;
    const r = rng.next();
    const path: Stage[] =
      r < 0.55 ? open.slice(0, rng.int(1, open.length)) : r < 0.8 ? [...open, won] : [...open.slice(0, rng.int(1, open.length)), lost];
    const createdAtMs = startMs - HOUR - Math.floor(rng.next() ** 1.5 * 180 * DAY);
    const company = rng.chance(0.8) ? rng.pick(companies) : null;
    const pool = company ? (contactsByCompany.get(company.id) ?? []) : [];
    const contactIds = rng.sample(pool.length > 0 ? pool : fallbackContacts, rng.int(0, 3));
    const ownerId = rng.chance(0.9) ? rng.pick(members) : null;
    const amountCents = rng.chance(0.12) ? null : rng.int(500, 150_000) * 100 + (rng.chance(0.4) ? rng.int(1, 99) : 0);
    const closeDate = rng.chance(0.2) ? null : new Date(createdAtMs + rng.int(7, 120) * DAY).toISOString().slice(0, 10);
    const final = path[path.length - 1] as Stage;
    const d: Deal = {
      id,
      name: `${company?.name ?? 'Direct'} ${rng.pick(DEAL_WORDS)}`,
      amountCents,
      currency: rng.pick(CURRENCIES),
      closeDate,
      stageId: final.id,
      pipelineId: pipeline.id,
      ownerId,
      companyId: company?.id ?? null,
      contactIds,
      fields: {},
      createdAtMs,
      updatedAtMs: createdAtMs,
      keyHistory: [],
      corrupt: null,
      deleted: false,
    };
    if (rng.chance(0.7)) d.fields.source = rng.pick(['inbound', 'outbound', 'referral', 'partner', 'event']);
    if (rng.chance(0.5)) d.fields.probability = final.isWon ? 100 : final.isLost ? 0 : Math.min(90, 10 + final.position * 20);

    const first = path[0] as Stage;
    ctx.drafts.push({
      type: 'deal.created',
      entityType: 'deal',
      entityId: id,
      payload: { name: d.name, pipelineId: pipeline.id, stageId: first.id },
      actor: ownerId,
      ms: createdAtMs,
    });
    const span = startMs - 60_000 - createdAtMs;
    let at = createdAtMs;
    for (let k = 1; k < path.length; k++) {
      at += Math.floor((rng.next() * span) / path.length);
      const from = (path[k - 1] as Stage).id;
      const to = (path[k] as Stage).id;
      draftChanges(ctx, 'deal', id, [{ field: 'stageId', from, to }], ownerId, at);
      for (const contactId of contactIds)
        ctx.drafts.push({
          type: 'contact.activity_logged',
          entityType: 'contact',
          entityId: contactId,
          payload: stageMovePayload(world, id, from, to),
          actor: ownerId,
          ms: at,
        });
    }
    d.updatedAtMs = at;
    d.keyHistory.push(0, at);
    pipeline.dealCount++;
    world.addDeal(d);
    all.push(d);
  }
  world.dealIndex.load(all);
}

import { actEveryKind, actRandomly } from './activity.js';
import { eventChanges } from './change-log.js';
import { mergeDialect } from './dialect.js';
import { defaultFaults, mergeFaults } from './faults-config.js';
import type { FaultInjector } from './faults.js';
import { rearmRemoval } from './list-paging.js';
import type { SimEvent } from './model.js';
import { dealTruth, eventTruth, pipelineOut, ticketTruth } from './render.js';
import type { RequestLog } from './request-log.js';
import { hideTicket, removeMessage, runAutomations } from './ticket-lifecycle.js';
import type {
  CorruptionKind,
  FaultConfig,
  HideReason,
  InjectedEvent,
  SimRecordKind,
  SimulatorControl,
  Truth,
  TruthChange,
} from './types.js';
import type { World } from './world.js';

/** The in-process control handle; the HTTP control surface calls the same methods. */
export function createControl(world: World, faults: FaultInjector, log: RequestLog): SimulatorControl {
  return {
    truth: () => groundTruth(world),
    setFaults(f: Partial<FaultConfig>): void {
      mergeFaults(world.faults, f);
      rearmRemoval(world);
    },
    clearFaults(): void {
      mergeFaults(world.faults, defaultFaults());
      rearmRemoval(world);
      faults.clearRules();
    },
    failNext(rule) {
      faults.failNext(rule);
    },
    requests: () => log.all(),
    clearRequests: () => log.clear(),
    onRequest: (listener) => log.onArrival(listener),
    now: () => new Date(world.clock.nowMs()),
    advanceClock(ms: number): void {
      world.clock.advance(ms);
      runAutomations(world);
    },
    hideTicket(id: string, reason: HideReason): void {
      if (reason !== 'spam' && reason !== 'deleted' && reason !== 'merged')
        throw new TypeError("reason must be 'spam', 'deleted' or 'merged'");
      const into = reason === 'merged' ? world.ticketIndex.newestFirst().find((t) => t.id !== id)?.id : undefined;
      hideTicket(world, id, reason, into);
    },
    corrupt(entityType: SimRecordKind, id: string, how: CorruptionKind = 'bad-timestamp'): void {
      if (how !== 'bad-timestamp' && how !== 'missing-field' && how !== 'wrong-type')
        throw new TypeError("how must be 'bad-timestamp', 'missing-field' or 'wrong-type'");
      world.kinds.of(entityType).kind.setCorruption(world, id, how);
    },
    repair(entityType: SimRecordKind, id: string): void {
      world.kinds.of(entityType).kind.setCorruption(world, id, null);
    },
    act: (count = 1) => actRandomly(world, count),
    actEveryKind: () => actEveryKind(world),
    burst(count: number): void {
      world.clock.frozen(() => actRandomly(world, count));
    },
    injectEvent: (e) => injectEvent(world, e),
    expireCursors(): void {
      world.cursorsExpiredUpTo = world.cursorSerial;
    },
    defineCustomField(entityType: SimRecordKind, def): void {
      const defs = world.customFields[entityType];
      const at = defs.findIndex((d) => d.key === def.key);
      if (at >= 0) defs[at] = { ...def };
      else defs.push({ ...def });
    },
    removeMessage(ticketId: string, messageId: string): void {
      removeMessage(world, ticketId, messageId);
    },
    dialect: () => ({ ...world.dialect }),
    setDialect(patch) {
      const next = { ...world.dialect };
      mergeDialect(next, patch);
      world.setDialect(next);
      return { ...world.dialect };
    },
  };
}

/** Everything a client could see right now, after the automations due by now have run. */
function groundTruth(world: World): Truth {
  runAutomations(world);
  const now = world.clock.nowMs();
  const visible = world.events.visible(now);
  return {
    tickets: world.ticketIndex.newestFirst().map((t) => ticketTruth(world, t)),
    hiddenTickets: [...world.tickets.values()].filter((t) => t.hidden !== null).map((t) => ({ id: t.id, reason: t.hidden as string })),
    deals: world.dealIndex.newestFirst().map((d) => dealTruth(world, d)),
    deletedDealIds: [...world.deletedDealIds],
    pipelines: world.pipelines.map((p) => structuredClone(pipelineOut(world, world.truthSpelling, p))),
    events: visible.map((e) => eventTruth(world, e)),
    changes: truthChanges(world, visible),
    members: world.memberList.map((m) => ({ id: m.id, name: m.name, email: m.email })),
    dialect: { ...world.dialect },
  };
}

/**
 * Every field change the visible events log, newest event first, each event's changes in logged
 * order. Values are ids, scalars or arrays of them; arrays are copied so a caller cannot reach
 * the simulator's own state.
 */
function truthChanges(world: World, visible: SimEvent[]): TruthChange[] {
  const out: TruthChange[] = [];
  for (const e of visible) {
    const changes = eventChanges(world, e);
    if (changes.length === 0) continue;
    const occurredAt = world.truthSpelling.stamp(e.occurredAtMs);
    const entityType = e.entityType as TruthChange['entityType'];
    const copy = (v: unknown): unknown => (Array.isArray(v) ? v.slice() : v);
    for (const c of changes)
      out.push({ eventId: e.id, entityType, entityId: e.entityId, field: c.field, from: copy(c.from), to: copy(c.to), occurredAt });
  }
  return out;
}

/**
 * Adds a change-log event that no write caused, for tests. It is visible at once (a backdated one
 * from its occurredAt) unless visibleAfterMs holds it back, as a lagging change log would.
 */
function injectEvent(world: World, e: InjectedEvent): string {
  if (typeof e.type !== 'string' || typeof e.entityType !== 'string' || typeof e.entityId !== 'string')
    throw new TypeError('injectEvent needs string type, entityType and entityId');
  const now = world.clock.nowMs();
  let ms = now;
  if (e.occurredAt !== undefined) {
    ms = Date.parse(e.occurredAt);
    if (Number.isNaN(ms)) throw new TypeError(`occurredAt is not a timestamp: ${e.occurredAt}`);
  }
  const ev: SimEvent = {
    injected: true,
    id: world.ids.next('evt'),
    seq: ++world.seq,
    type: e.type,
    entityType: e.entityType,
    entityId: e.entityId,
    payload: e.payload ?? {},
    actor: e.actor ?? null,
    occurredAtMs: ms,
    visibleAtMs: e.visibleAfterMs !== undefined && e.visibleAfterMs > 0 ? now + e.visibleAfterMs : Math.min(ms, now),
  };
  world.events.add(ev);
  return ev.id;
}

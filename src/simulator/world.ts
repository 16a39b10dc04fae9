import { SimClock } from './clock.js';
import { EventLog } from './eventlog.js';
import { defaultFaults } from './faults-config.js';
import type { Company, Contact, Deal, Listed, Member, Pipeline, SimEvent, Stage, Team, Ticket } from './model.js';
import { IdFactory, Rng } from './random.js';
import { RecencyIndex, WriteLog } from './recency.js';
import { servedSpelling, truthSpelling, type Spelling } from './spelling.js';
import type { DialectOptions, FaultConfig } from './types.js';
import { DEAL_FIELDS, TICKET_FIELDS, type FieldDef } from './catalog.js';

export interface WorldSettings {
  seed: number;
  startMs: number;
  /** See SimulatorOptions.realTime. */
  realTime: boolean;
  autoAssignOnReply: boolean;
  autoCloseSolvedAfterMs: number;
  dialect: DialectOptions;
}

/**
 * The simulated workspace: every record, the change log, the clock and the shared write
 * bookkeeping (sequence numbers, order keys, caches). Operations live in ticket-ops/deal-ops.
 */
export class World {
  readonly clock: SimClock;
  readonly ids: IdFactory;
  /** Drives activity choices; separate from the generator and faults so each stays reproducible. */
  readonly activityRng: Rng;
  readonly faultRng: Rng;
  readonly faults: FaultConfig = defaultFaults();

  readonly members = new Map<string, Member>();
  readonly memberList: Member[] = [];
  readonly contacts = new Map<string, Contact>();
  readonly contactsByEmail = new Map<string, Contact>();
  readonly contactList: Contact[] = [];
  readonly companies = new Map<string, Company>();
  readonly teams = new Map<string, Team>();
  readonly pipelines: Pipeline[] = [];
  readonly stages = new Map<string, Stage>();

  readonly tickets = new Map<string, Ticket>();
  readonly ticketIndex = new RecencyIndex<Ticket>();
  readonly ticketWrites = new WriteLog<Ticket>();
  readonly deals = new Map<string, Deal>();
  readonly dealIndex = new RecencyIndex<Deal>();
  readonly dealWrites = new WriteLog<Deal>();
  readonly deletedDealIds: string[] = [];
  /** The workspace's custom field definitions; control.defineCustomField adds or redefines one, as an admin would. */
  readonly customFields: { ticket: FieldDef[]; deal: FieldDef[] } = { ticket: [...TICKET_FIELDS], deal: [...DEAL_FIELDS] };
  /** Creation order, for random picks that must not depend on timing (the index order does). */
  readonly ticketList: Ticket[] = [];
  readonly dealList: Deal[] = [];

  readonly events = new EventLog();
  /** Sequence of every write and event; snapshots and event tie-breaks use it. */
  seq = 0;
  nextTicketNumber = 1001;

  /** Solved tickets in the order they were solved, for the auto-close automation. */
  readonly solvedQueue: { ticket: Ticket; solvedAtMs: number }[] = [];
  solvedHead = 0;

  /** Cursors with a serial at or below this are rejected (expireCursors). */
  cursorSerial = 0;
  cursorsExpiredUpTo = 0;

  /** The dialect in force; change it only through setDialect, which keeps the spellings and caches in step. */
  readonly dialect: DialectOptions;
  /** How answers are written; every cached body was written with it. */
  spelling: Spelling;
  /** How control.truth() writes records and events. */
  truthSpelling: Spelling;

  constructor(readonly settings: WorldSettings) {
    this.dialect = { ...settings.dialect };
    this.spelling = servedSpelling(this.dialect);
    this.truthSpelling = truthSpelling(this.dialect);
    this.clock = new SimClock(settings.startMs, settings.realTime);
    this.ids = new IdFactory(new Rng(settings.seed * 7919 + 11));
    this.activityRng = new Rng(settings.seed * 104729 + 3);
    this.faultRng = new Rng(settings.seed * 1299709 + 5);
  }

  addMember(m: Member): void {
    this.members.set(m.id, m);
    this.memberList.push(m);
    this.ids.reserve(m.id);
  }

  addContact(c: Contact): void {
    this.contacts.set(c.id, c);
    this.contactsByEmail.set(c.email.toLowerCase(), c);
    this.contactList.push(c);
  }

  addTicket(t: Ticket): void {
    this.tickets.set(t.id, t);
    this.ticketList.push(t);
  }

  addDeal(d: Deal): void {
    this.deals.set(d.id, d);
    this.dealList.push(d);
  }

  addStage(s: Stage): void {
    this.stages.set(s.id, s);
  }

  /** Appends an event at `ms`; a `lateEventRate` fraction becomes visible only later. */
  emit(type: string, entityType: string, entityId: string, payload: object, actor: string | object | null, ms: number): SimEvent {
    const late = this.faults.lateEventRate > 0 && this.faultRng.chance(this.faults.lateEventRate);
    const e: SimEvent = {
      id: this.ids.next('evt'),
      seq: ++this.seq,
      type,
      entityType,
      entityId,
      payload,
      actor,
      occurredAtMs: ms,
      visibleAtMs: late ? ms + this.faults.lateEventDelayMs : ms,
    };
    this.events.add(e);
    return e;
  }

  /** Call before mutating a listed record: unhooks it from the order and keeps its old body for stale reads. */
  beginWrite(rec: Listed, render: () => Buffer): void {
    rec.prevBody = rec.fullBody ?? render();
    if (isTicket(rec)) this.ticketIndex.remove(rec);
    else this.dealIndex.remove(rec as Deal);
  }

  /** Call after mutating: bumps updatedAt to `ms`, records the new order key, drops caches. */
  commitWrite(rec: Listed, ms: number): void {
    rec.updatedAtMs = ms;
    rec.listJson = undefined;
    rec.fullBody = undefined;
    const seq = ++this.seq;
    rec.keyHistory.push(seq, ms);
    if (isTicket(rec)) {
      this.ticketWrites.add(seq, rec);
      if (rec.hidden === null) this.ticketIndex.insert(rec);
    } else {
      const deal = rec as Deal;
      this.dealWrites.add(seq, deal);
      if (!deal.deleted) this.dealIndex.insert(deal);
    }
  }

  /**
   * Applies an already validated dialect. When the way answers are written changes, every cached
   * body is dropped, including the bodies kept for stale reads (a stale read then serves the
   * current version), so no answer mixes two spellings.
   */
  setDialect(next: DialectOptions): void {
    const { timestamps, extraFields, teamShape } = this.dialect;
    Object.assign(this.dialect, next);
    this.spelling = servedSpelling(this.dialect);
    this.truthSpelling = truthSpelling(this.dialect);
    const d = this.dialect;
    if (d.timestamps === timestamps && d.extraFields === extraFields && d.teamShape === teamShape) return;
    for (const rec of [...this.tickets.values(), ...this.deals.values()]) {
      rec.listJson = undefined;
      rec.fullBody = undefined;
      rec.prevBody = undefined;
    }
    this.events.dropCaches();
  }

  memberOrThrow(id: string): Member {
    const m = this.members.get(id);
    if (!m) throw new Error(`unknown member ${id}`);
    return m;
  }
}

export function isTicket(rec: Listed): rec is Ticket {
  return (rec as Ticket).messages !== undefined;
}

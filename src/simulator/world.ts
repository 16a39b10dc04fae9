import { SimClock } from './clock.js';
import { EventLog } from './eventlog.js';
import { defaultFaults } from './faults-config.js';
import type { Company, Contact, Deal, Listed, Member, Pipeline, SimEvent, Stage, Team, Ticket } from './model.js';
import { IdFactory, Rng } from './random.js';
import { RecencyIndex, WriteLog } from './recency.js';
import { servedSpelling, truthSpelling, type Spelling } from './spelling.js';
import type { ApiRequest, ApiResponse, CorruptionKind, DialectOptions, FaultConfig } from './types.js';
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

  /** Every record kind served (src/simulator/kinds.ts), with its records. */
  readonly kinds: KindTable;
  /** The ticket and deal kinds' records, under the names the ticket and deal code reads them by. */
  readonly tickets: Map<string, Ticket>;
  readonly ticketIndex: RecencyIndex<Ticket>;
  readonly ticketWrites: WriteLog<Ticket>;
  readonly deals: Map<string, Deal>;
  readonly dealIndex: RecencyIndex<Deal>;
  readonly dealWrites: WriteLog<Deal>;
  readonly deletedDealIds: string[] = [];
  /** The workspace's custom field definitions; control.defineCustomField adds or redefines one, as an admin would. */
  readonly customFields: { ticket: FieldDef[]; deal: FieldDef[] } = { ticket: [...TICKET_FIELDS], deal: [...DEAL_FIELDS] };
  /** Creation order, for random picks that must not depend on timing (the index order does). */
  readonly ticketList: Ticket[];
  readonly dealList: Deal[];

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

  constructor(
    readonly settings: WorldSettings,
    kinds: readonly SimKind[],
  ) {
    this.kinds = new KindTable(kinds);
    const tickets = this.kinds.of('ticket') as unknown as KindRecords<Ticket>;
    const deals = this.kinds.of('deal') as unknown as KindRecords<Deal>;
    [this.tickets, this.ticketIndex, this.ticketWrites, this.ticketList] = [tickets.records, tickets.index, tickets.writes, tickets.list];
    [this.deals, this.dealIndex, this.dealWrites, this.dealList] = [deals.records, deals.index, deals.writes, deals.list];
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
    this.kinds.of('ticket').add(t);
  }

  addDeal(d: Deal): void {
    this.kinds.of('deal').add(d);
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

  /** Call before mutating a record of `kind`: unhooks it from the order and keeps its old body for stale reads. */
  beginWrite(kind: string, rec: Listed, render: () => Buffer): void {
    const records = this.kinds.of(kind);
    rec.prevBody = rec.fullBody ?? render();
    records.index.remove(rec);
  }

  /** Call after mutating: bumps updatedAt to `ms`, records the new order key, drops caches. */
  /**
   * One write of a record of `kind` as the kind's own operations make it (a test's kind): the copy
   * before it kept for stale reads, the change, the commit, then its change-log event.
   */
  writeRecord<R extends Listed>(
    kind: string,
    rec: R,
    served: (r: R) => string,
    change: (r: R) => void,
    event: { type: string; payload: object },
  ): void {
    const ms = this.clock.nowMs();
    this.beginWrite(kind, rec, () => Buffer.from(served(rec)));
    change(rec);
    this.commitWrite(kind, rec, ms);
    this.emit(event.type, kind, rec.id, event.payload, null, ms);
  }

  commitWrite(kind: string, rec: Listed, ms: number): void {
    const records = this.kinds.of(kind);
    rec.updatedAtMs = ms;
    rec.listJson = undefined;
    rec.fullBody = undefined;
    const seq = ++this.seq;
    rec.keyHistory.push(seq, ms);
    records.writes.add(seq, rec);
    if (records.kind.served(rec)) records.index.insert(rec);
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
    for (const rec of this.kinds.all().flatMap((k) => [...k.records.values()])) {
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

/**
 * One record kind the simulated workspace serves (a ticket, a deal, a kind a test registers):
 * every branch of the simulator that depends on the kind goes through its entry, so a kind the
 * table lacks fails loudly instead of being filed as another.
 */
export interface SimKind<R extends Listed = Listed> {
  /** The change log's entityType (`ticket`). */
  readonly name: string;
  /** The API path segment and the list's key (`tickets`). */
  readonly collection: string;
  /** Whether the record is served now, in its list and by id (a hidden ticket, a deleted deal is not). */
  served(rec: R): boolean;
  /** Fields that have an event type of their own under the `dedicated` change events (`stageId` → `deal.stage_changed`). */
  readonly dedicatedTypes: Readonly<Record<string, string>>;
  /** Answers a request under `/<collection>`: `id` and `sub` are the next path segments. */
  route(world: World, req: ApiRequest, id: string | undefined, sub: string | undefined): ApiResponse;
  /** Serves the record corrupt (`how`) or repairs it (null), as a write. */
  setCorruption(world: World, id: string, how: CorruptionKind | null): void;
}

/** What the world holds of one kind: its records, their list order and their writes. */
export class KindRecords<R extends Listed = Listed> {
  readonly records = new Map<string, R>();
  /** Served records, newest-updated first. */
  readonly index = new RecencyIndex<R>();
  readonly writes = new WriteLog<R>();
  /** Creation order, for random picks that must not depend on timing (the index order does). */
  readonly list: R[] = [];
  constructor(readonly kind: SimKind<R>) {}

  add(rec: R): void {
    this.records.set(rec.id, rec);
    this.list.push(rec);
  }
}

/** The kinds of a world by name and by collection; an unknown one throws naming the table. */
export class KindTable {
  readonly #byName = new Map<string, KindRecords>();
  readonly #byCollection = new Map<string, KindRecords>();

  constructor(kinds: readonly SimKind[]) {
    for (const kind of kinds) {
      if (this.#byName.has(kind.name) || this.#byCollection.has(kind.collection))
        throw new Error(`simulator: record kind ${kind.name} (/${kind.collection}) is registered twice`);
      const records = new KindRecords(kind);
      this.#byName.set(kind.name, records);
      this.#byCollection.set(kind.collection, records);
    }
  }

  /** The records of kind `name`; throws when no kind of that name is registered. */
  of(name: string): KindRecords {
    const records = this.#byName.get(name);
    if (!records)
      throw new TypeError(`simulator: no record kind ${JSON.stringify(name)} is registered (known: ${this.names().join(', ')})`);
    return records;
  }

  /** The kind served under `/<collection>`, or undefined (a path the API does not have). */
  byCollection(collection: string | undefined): KindRecords | undefined {
    return collection === undefined ? undefined : this.#byCollection.get(collection);
  }

  has(name: string): boolean {
    return this.#byName.has(name);
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }

  all(): KindRecords[] {
    return [...this.#byName.values()];
  }
}

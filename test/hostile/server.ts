/**
 * A hostile upstream for the tests: a proxy in front of the bundled simulator that forwards every
 * request, except where a fault is switched on; then it answers the way a broken server, proxy
 * or partial outage would (docs/sync.md, "Hostile upstream"). The simulator stays the ground
 * truth, so a scenario still ends in a whole-mirror comparison.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { deepJsonStream, filler, repeatedBytes } from './bodies.js';

/** Faults, each off when undefined. Tests switch them on and off between CLI runs. */
export interface Faults {
  /** An extra event put at the top of the log (every first page of a listing). */
  injectEvent?: Record<string, unknown>;
  /** Single-record reads of this id answer with this status and a short JSON body. */
  recordStatus?: { id: string; status: number };
  /** Single-record reads of this id answer 200 with an HTML page. */
  recordHtml?: string;
  /** Single-record reads of this id answer with the record of `other`. */
  wrongId?: { id: string; other: string };
  /** Single-record reads of this id get these extra custom fields (`fields`). */
  extraFields?: { id: string; fields: Record<string, unknown> };
  /** Single-record reads of this id get a custom field nested `depth` levels deep (streamed). */
  deepField?: { id: string; depth: number };
  /** Single-record reads of this id get updatedAt replaced by a string of `chars` characters. */
  hugeInvalidValue?: { id: string; chars: number };
  /** Single-record reads of these ids answer 200 with a body of `bytes` bytes (streamed; Content-Length when `announce`). */
  hugeRecordBody?: { ids: string[]; bytes: number; announce: boolean };
  /** Event listings answer 200 with a body of this many bytes (streamed, no Content-Length). */
  hugeEventsBody?: number;
  /** Event listings answer 503 with a JSON body of this many bytes (streamed). */
  hugeErrorBody?: number;
  /** Event listings hand back the cursor they were given (or "loop" on the first page). */
  repeatCursor?: boolean;
  /** Event listings answer empty pages with fresh cursors forever. */
  endlessEmptyPages?: boolean;
  /** Event listings of a cycle never answer (the connection stays open until the client gives up). */
  stallEvents?: boolean;
  /** Fields overwritten on these records (by id), in single-record reads and in list pages alike. */
  patchRecords?: Record<string, Record<string, unknown>>;
  /** The probe (events, limit=1, no cursor) answers with this status and an HTML page. */
  probeStatus?: { status: number; html?: boolean; location?: string };
  /** Every answer carries this `Date` header (e.g. `Fri, 01 Jan 2100 00:00:00 GMT`) instead of the real clock's. */
  date?: string;
  /**
   * Rewrites of what the simulator answers, in place: every ticket and deal (single reads and list
   * items alike, after `patchRecords`), the pipelines list, and every change-log page's events.
   */
  rewrite?: {
    record?(kind: 'ticket' | 'deal', rec: Record<string, unknown>): void;
    pipelines?(pipelines: Record<string, unknown>[]): void;
    events?(events: Record<string, unknown>[]): void;
  };
  /**
   * Single-record reads of these ids (`'all'`: every one), and list pages when `lists`, answer 200
   * at once and then trickle their real body one byte per `intervalMs`: only a whole-request
   * deadline ends such a read, never an idle timeout.
   */
  trickle?: { ids: string[] | 'all'; lists?: boolean; intervalMs: number };
}

export interface HostileUpstream {
  url: string;
  faults: Faults;
  /** Paths requested, in order (for asserting that a stalled or looping run really stopped). */
  log: string[];
  close(): Promise<void>;
}

export async function startHostile(simUrl: string): Promise<HostileUpstream> {
  const faults: Faults = {};
  const log: string[] = [];
  const server: Server = createServer((req, res) => {
    log.push(req.url ?? '');
    handle(req, res, simUrl, faults).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(err) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    faults,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, simUrl: string, f: Faults): Promise<void> {
  if (f.date !== undefined) res.setHeader('date', f.date);
  const url = new URL(req.url ?? '/', 'http://x');
  const path = url.pathname;
  const record = /^\/api\/v1\/(tickets|deals)\/([^/]+)$/.exec(path);
  const id = record ? decodeURIComponent(record[2]!) : null;
  if (path === '/api/v1/events') {
    const cursor = url.searchParams.get('cursor');
    if (f.probeStatus && url.searchParams.get('limit') === '1' && !cursor) {
      const { status, html, location } = f.probeStatus;
      res.writeHead(status, { 'content-type': html ? 'text/html' : 'application/json', ...(location ? { location } : {}) });
      return void res.end(html ? '<!doctype html><html><body>Welcome to our homepage</body></html>' : '{"error":"not here"}');
    }
    // The cycle's listing (it carries `since`) hangs; the probe still answers, so the watchdog is what ends it.
    if (f.stallEvents && (url.searchParams.has('since') || cursor)) return;
    if (f.hugeErrorBody !== undefined) return stream(res, 503, filler('{"error":"', f.hugeErrorBody, '"}'));
    if (f.hugeEventsBody !== undefined) return stream(res, 200, filler('{"events":[],"pad":"', f.hugeEventsBody, '"}'));
    if (f.endlessEmptyPages && cursor !== null) return json(res, 200, { events: [], nextCursor: `${cursor}x` });
    // A repeating cursor means nothing to the simulator: that listing is served from its start.
    if (f.repeatCursor) url.searchParams.delete('cursor');
    const page = (await forward(req, simUrl, url.pathname + url.search)) as { events: unknown[]; nextCursor: string | null };
    if (f.injectEvent && !cursor) page.events.unshift(f.injectEvent);
    f.rewrite?.events?.(page.events as Record<string, unknown>[]);
    if (f.repeatCursor) page.nextCursor = cursor ?? 'loop';
    if (f.endlessEmptyPages) page.nextCursor = 'e';
    return json(res, 200, page);
  }
  if (id !== null) {
    if (f.recordStatus?.id === id) return json(res, f.recordStatus.status, { error: 'not for you' });
    if (f.recordHtml === id) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end('<html><body>Bad gateway, please log in</body></html>');
    }
    if (f.hugeRecordBody?.ids.includes(id)) {
      const { bytes, announce } = f.hugeRecordBody;
      return stream(res, 200, repeatedBytes(bytes), announce ? bytes : undefined);
    }
    const fetchId = f.wrongId?.id === id ? f.wrongId.other : id;
    const body = (await forward(req, simUrl, path.replace(encodeURIComponent(id), encodeURIComponent(fetchId)))) as Record<
      string,
      Record<string, unknown>
    >;
    const key = record![1] === 'tickets' ? 'ticket' : 'deal';
    const rec = body[key]!;
    Object.assign(rec, f.patchRecords?.[id] ?? {});
    f.rewrite?.record?.(key, rec);
    if (f.extraFields?.id === id) rec.fields = { ...(rec.fields as object), ...f.extraFields.fields };
    if (f.hugeInvalidValue?.id === id) rec.updatedAt = 'x'.repeat(f.hugeInvalidValue.chars);
    if (f.deepField?.id === id) {
      // `{"ticket": {...record, "fields": {"deep": [[[...]]]}}}` written as a stream: no recursion anywhere.
      const head = JSON.stringify({ [key]: { ...rec, fields: { deep: '\u0001' } } }).replace('"\\u0001"', '\u0001');
      const [before, after] = head.split('\u0001') as [string, string];
      return stream(res, 200, Readable.from(deepJsonStream(before, f.deepField.depth, after)));
    }
    if (f.trickle && (f.trickle.ids === 'all' || f.trickle.ids.includes(id)))
      return trickle(res, JSON.stringify(body), f.trickle.intervalMs);
    return json(res, 200, body);
  }
  const body = await forward(req, simUrl);
  const list = /^\/api\/v1\/(tickets|deals)$/.exec(path);
  if (list) {
    const kind = list[1] === 'tickets' ? 'ticket' : 'deal';
    for (const item of (body as Record<string, Record<string, unknown>[]>)[list[1]!] ?? []) {
      Object.assign(item, f.patchRecords?.[String(item.id)] ?? {});
      f.rewrite?.record?.(kind, item);
    }
    if (f.trickle?.lists) return trickle(res, JSON.stringify(body), f.trickle.intervalMs);
  }
  if (path === '/api/v1/pipelines') f.rewrite?.pipelines?.((body as { pipelines: Record<string, unknown>[] }).pipelines);
  return json(res, 200, body);
}

/** 200 at once, then `text` one byte per `intervalMs` until the client hangs up. */
function trickle(res: ServerResponse, text: string, intervalMs: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const bytes = Buffer.from(text);
  let i = 0;
  const timer = setInterval(() => {
    if (i >= bytes.length) {
      clearInterval(timer);
      return void res.end();
    }
    res.write(bytes.subarray(i, ++i));
  }, intervalMs);
  res.on('close', () => clearInterval(timer));
}

/** The simulator's answer to the same request (or to `target`, path and query). */
async function forward(req: IncomingMessage, simUrl: string, target = req.url ?? '/'): Promise<unknown> {
  const r = await fetch(simUrl + target, { headers: { authorization: req.headers.authorization ?? '' } });
  return r.json();
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function stream(res: ServerResponse, status: number, body: Readable, length?: number): void {
  res.writeHead(status, { 'content-type': 'application/json', ...(length === undefined ? {} : { 'content-length': String(length) }) });
  body.pipe(res);
  res.on('close', () => body.destroy());
}

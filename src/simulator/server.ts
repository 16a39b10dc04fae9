import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from './errors.js';
import type { FaultInjector } from './faults.js';
import type { RequestLog } from './request-log.js';
import { route, type ApiResponse } from './routes.js';
import { runAutomations } from './ticket-lifecycle.js';
import type { RequestLogEntry } from './types.js';
import type { World } from './world.js';

export interface HandlerDeps {
  world: World;
  faults: FaultInjector;
  /** API key -> member id. */
  apiKeys: Map<string, string>;
  log: RequestLog;
}

const API_PREFIX = '/api/v1/';
const JSON_TYPE = 'application/json; charset=utf-8';

export function send(res: ServerResponse, status: number, body: string | Buffer, headers?: Record<string, string>): void {
  res.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function parseQuery(qs: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!qs) return out;
  for (const [k, v] of new URLSearchParams(qs)) out[k] = v;
  return out;
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function bearer(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (h === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

const UNAUTHORIZED = new ApiError(
  401,
  'unauthorized',
  'Missing or invalid API key; send the header Authorization: Bearer <API_KEY>.',
  undefined,
  {
    'www-authenticate': 'Bearer',
  },
);

/**
 * One workspace's API handler; `url` is the request's path and query below the workspace's
 * prefix (workspaces.ts routes to it). GETs without latency are answered synchronously, so the
 * hot read path is a key lookup, a map lookup and a cached buffer.
 */
export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse, url: string) => void {
  const { world, faults, apiKeys, log } = deps;
  return (req, res, url) => {
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const started = performance.now();
    const method = req.method ?? 'GET';
    const key = bearer(req);
    const actor = key === undefined ? undefined : apiKeys.get(key);
    const entry: RequestLogEntry = {
      method,
      path,
      query: parseQuery(q < 0 ? undefined : url.slice(q + 1)),
      status: 0,
      startedAt: new Date().toISOString(),
      durationMs: 0,
      authorized: actor !== undefined,
    };
    log.arrived(entry);
    // Counted (and answered 429 when empty) ahead of everything else, as a gateway in front of the API would.
    const rate = faults.rateLimit(path);
    const finish = (status: number, body: string | Buffer, headers?: Record<string, string>): void => {
      entry.status = status;
      entry.durationMs = performance.now() - started;
      log.add(entry);
      send(res, status, body, { ...rate?.headers, ...dateHeader(res, world, faults, path), ...headers });
    };
    const fail = (err: unknown): void => {
      const e = err instanceof ApiError ? err : new ApiError(500, 'internal_error', `Unexpected simulator error: ${String(err)}`);
      finish(e.status, e.body(), e.headers);
    };

    try {
      if (rate?.error) {
        fail(rate.error);
        return;
      }
      runAutomations(world);
      const decision = faults.decide(method, path);
      if (decision?.drop) {
        entry.durationMs = performance.now() - started;
        log.add(entry);
        req.socket.destroy();
        return;
      }
      const call: ApiCall = { method, path, query: entry.query, actor, fault: decision?.error };
      const answer = (bodyText: string | undefined): void => {
        try {
          const r = answerApi(world, faults, call, bodyText);
          finish(r.status, r.body);
        } catch (err) {
          fail(err);
        }
      };
      answerWhenReady(req, res, world, faults, call, answer, fail);
    } catch (err) {
      fail(err);
    }
  };
}

/**
 * The `Date` header is the upstream's own clock, which a client compares event times with, so it
 * is the simulated clock, not the host's (the two differ once a test advances the simulated one).
 * The `dateHeader` and `dateSkewMs` faults send none, junk, or a clock that is off.
 */
function dateHeader(res: ServerResponse, world: World, faults: FaultInjector, path: string): Record<string, string> {
  const f = world.faults;
  const faulty = faults.applies(path);
  if (faulty && f.dateHeader === 'none') {
    res.sendDate = false;
    return {};
  }
  if (faulty && f.dateHeader === 'invalid') return { date: 'not a date' };
  return { date: new Date(world.clock.nowMs() + (faulty ? f.dateSkewMs : 0)).toUTCString() };
}

/** One API request as the handler has read it, before its body. */
interface ApiCall {
  method: string;
  path: string;
  query: Record<string, string>;
  /** Member id of the API key; undefined when the key is missing or unknown. */
  actor: string | undefined;
  /** The scheduled or random fault that answers instead of the API. */
  fault: ApiError | undefined;
}

/**
 * Answers at once when there is neither a body to read nor latency to add (the hot read path);
 * otherwise after both, unless the client has gone or been answered meanwhile.
 */
function answerWhenReady(
  req: IncomingMessage,
  res: ServerResponse,
  world: World,
  faults: FaultInjector,
  call: ApiCall,
  answer: (bodyText: string | undefined) => void,
  fail: (err: unknown) => void,
): void {
  const latency = faults.applies(call.path) ? world.faults.latencyMs : 0;
  const needsBody = call.method !== 'GET' && call.method !== 'HEAD';
  if (!needsBody && latency <= 0) {
    answer(undefined);
    return;
  }
  void (async () => {
    try {
      const text = needsBody ? await readBody(req) : undefined;
      if (latency > 0) await sleep(latency);
      answer(text);
    } catch (err) {
      if (!res.headersSent && !res.destroyed) fail(err);
    }
  })();
}

/** The API's answer to one call, or the ApiError it answers with; a fault answers before the key is even checked. */
function answerApi(world: World, faults: FaultInjector, call: ApiCall, bodyText: string | undefined): ApiResponse {
  if (call.fault) throw call.fault;
  if (call.actor === undefined) throw UNAUTHORIZED;
  if (!call.path.startsWith(API_PREFIX)) throw new ApiError(404, 'not_found', 'No such API path.');
  let body: unknown;
  if (bodyText !== undefined && bodyText.trim() !== '') {
    try {
      body = JSON.parse(bodyText);
    } catch {
      throw new ApiError(400, 'invalid_json', 'The request body is not valid JSON.');
    }
  }
  let segments: string[];
  try {
    segments = call.path
      .slice(API_PREFIX.length)
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  } catch {
    throw new ApiError(404, 'not_found', 'No such API path.');
  }
  const stale = isStaleRead(world, faults, call, segments);
  const oldestFirst = world.faults.eventPageOrder === 'oldest-first' && faults.applies(call.path);
  return route(world, { method: call.method, segments, query: call.query, body, actor: call.actor, stale, oldestFirst });
}

/**
 * The stale-read fault: a GET of one record or of a ticket or deal list may be served from the
 * previous version. The fault's random draw is only taken for such reads, so other requests leave
 * the fault sequence untouched.
 */
function isStaleRead(world: World, faults: FaultInjector, call: ApiCall, segments: string[]): boolean {
  return (
    call.method === 'GET' &&
    (segments.length === 2 || (segments.length === 1 && segments[0] !== 'events' && segments[0] !== 'pipelines')) &&
    world.faults.staleReadRate > 0 &&
    faults.applies(call.path) &&
    world.faultRng.chance(world.faults.staleReadRate)
  );
}

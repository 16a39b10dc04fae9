import { createServer, type Server } from 'node:http';
import type pg from 'pg';
import { bearerGate } from '../daemon/index.js';
import type { Logger } from '../log/index.js';
import type { FleetMetrics } from './metrics.js';
import { renderFleetPage, renderWorkspacePage } from './page.js';
import { readFleetStatus } from './status.js';

export interface FleetHttpOptions {
  host: string;
  port: number;
  authToken?: string | undefined;
  pool: pg.Pool;
  metrics: FleetMetrics;
  logger: Logger;
  /** Liveness: false once the worker lost its queue or database. */
  alive: () => boolean;
  /** Readiness: true once the worker reconciled the fleet file and joined the queue, false again once it stops. */
  ready: () => boolean;
}

/**
 * The worker's HTTP server: the fleet page, /fleet.json, /workspaces/<id>, /metrics, /healthz,
 * /readyz. The token rule is the daemon's (`bearerGate`): every path but /healthz needs it.
 */
export async function startFleetHttp(o: FleetHttpOptions): Promise<Server> {
  const allowed = bearerGate(o.authToken);
  const server = createServer((req, res) => {
    void route(o, allowed, req.url ?? '/', req.headers.authorization)
      .then(({ status, type, body }) => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
        res.end(body);
      })
      .catch((err: unknown) => {
        o.logger.warn({ err }, 'fleet page failed');
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end('the fleet database could not be read; see the worker log\n');
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  o.logger.info({ host: o.host, port: typeof address === 'object' && address ? address.port : o.port }, 'fleet page listening');
  return server;
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

async function route(
  o: FleetHttpOptions,
  allowed: (path: string, authorization: string | undefined) => boolean,
  url: string,
  authorization: string | undefined,
): Promise<Reply> {
  const { pathname, searchParams } = new URL(url, 'http://x');
  if (!allowed(pathname, authorization)) return text(401, 'send Authorization: Bearer <http.authToken>\n');
  if (pathname === '/healthz') return o.alive() ? text(200, 'ok\n') : text(503, 'the worker lost its database or queue\n');
  if (pathname === '/readyz') return readiness(o);
  const status = await readFleetStatus(o.pool);
  if (pathname === '/')
    return { status: 200, type: 'text/html; charset=utf-8', body: renderFleetPage(status, searchParams.get('sort') ?? 'staleness') };
  if (pathname === '/fleet.json') return { status: 200, type: 'application/json', body: JSON.stringify(status) };
  if (pathname === '/metrics') return { status: 200, type: o.metrics.registry.contentType, body: await o.metrics.render(status, o.pool) };
  const m = /^\/workspaces\/([^/]+)$/.exec(pathname);
  const one = m ? status.workspaces.find((w) => w.id === decodeURIComponent(m[1]!)) : undefined;
  if (one) return { status: 200, type: 'text/html; charset=utf-8', body: renderWorkspacePage(one) };
  return text(404, 'not found\n');
}

function text(status: number, body: string): Reply {
  return { status, type: 'text/plain; charset=utf-8', body };
}

function readiness(o: FleetHttpOptions): Reply {
  if (!o.alive()) return text(503, 'not ready: the worker lost its database or queue\n');
  if (!o.ready()) return text(503, 'not ready: the worker is starting (reconciling the fleet file, joining the queue) or stopping\n');
  return text(200, 'ready\n');
}

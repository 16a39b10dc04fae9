import { createServer, type Server } from 'node:http';
import type { Logger } from '../log/index.js';
import { WsmirrorError } from '../util/errors.js';
import type { HealthTracker } from './health.js';
import type { DaemonMetrics } from './metrics.js';

/**
 * GET /healthz (liveness), GET /readyz (readiness), both JSON with 503 and a `reason` when not
 * ok; GET /metrics (Prometheus text). docs/operations.md says what each answer means.
 */
export async function startHealthServer(options: {
  host: string;
  port: number;
  metrics: DaemonMetrics;
  health: HealthTracker;
  logger: Logger;
}): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && (path === '/healthz' || path === '/readyz')) {
      const verdict = path === '/healthz' ? options.health.liveness() : options.health.readiness();
      res.writeHead(verdict.ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify(verdict.body));
      return;
    }
    if (req.method === 'GET' && path === '/metrics') {
      options.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
          res.end(text);
        },
        (err: Error) => {
          res.writeHead(500).end(err.message);
        },
      );
      return;
    }
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: 'not found; try /healthz, /readyz or /metrics' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const url = `http://${options.host}:${port}`;
  options.logger.info({ url }, 'health and metrics server listening');
  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port in use or not allowed is a configuration problem (exit 2) naming the key to change. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  if (err.code === 'EADDRINUSE' || err.code === 'EACCES') {
    const what = err.code === 'EADDRINUSE' ? 'is already in use' : 'may not be opened by this user';
    return new WsmirrorError(
      'PORT_IN_USE',
      `http.port ${port} on ${host} ${what}; choose another http.port (or WSMIRROR_HTTP_PORT), or 0 to disable the health server.`,
      { cause: err },
    );
  }
  if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') {
    return new WsmirrorError('PORT_IN_USE', `http.host ${host} is not an address of this machine; fix http.host (or WSMIRROR_HTTP_HOST).`, {
      cause: err,
    });
  }
  return err;
}

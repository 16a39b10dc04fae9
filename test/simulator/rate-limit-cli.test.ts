import { describe, expect, it } from 'vitest';
import { runCli, spawnCli, waitForOutput } from '../helpers/cli.js';

describe('wsmirror simulate --rate-limit', () => {
  it('serves the token bucket with its headers, sized by --rate-limit-burst', async () => {
    // 0.01 tokens/s: nothing refills during the test, so exactly the burst passes.
    const sim = spawnCli(
      ['simulate', '--port', '0', '--api-key', 'k', '--tickets', '5', '--deals', '2', '--rate-limit', '0.01', '--rate-limit-burst', '2'],
      {},
    );
    try {
      let out = '';
      sim.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitForOutput(sim, /listening on/);
      const base = /listening on (http:\/\/\S+?) /.exec(out)![1]!;
      const get = () => fetch(`${base}/api/v1/pipelines`, { headers: { authorization: 'Bearer k' } });
      const first = await get();
      expect(first.status).toBe(200);
      expect(first.headers.get('ratelimit-limit')).toBe('2');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
      expect((await get()).status).toBe(200);
      const refused = await get();
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    } finally {
      sim.kill('SIGTERM');
      expect((await sim.result).code).toBe(0);
    }
  });

  it('rejects a rate that is not a positive number, naming the flag', async () => {
    const r = await runCli(['simulate', '--port', '0', '--rate-limit', 'fast'], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--rate-limit must be a number of requests per second above 0; got "fast"/);
  });
});

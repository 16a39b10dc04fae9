import { describe, expect, it } from 'vitest';
import { linkSignals } from '../util/signals.js';
import { ProgressWatchdog } from './watchdog.js';

describe('ProgressWatchdog', () => {
  it("takes a listener per request in flight at the highest concurrency without Node's leak warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => void warnings.push(w);
    process.on('warning', onWarning);
    const watchdog = new ProgressWatchdog(60_000);
    try {
      // Past concurrency's maximum (config schema: 64) plus a list page.
      const links = Array.from({ length: 66 }, () => linkSignals([watchdog.signal]));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
      for (const link of links) link.dispose();
    } finally {
      watchdog.stop();
      process.off('warning', onWarning);
    }
  });
});

import type { GlobalFlags } from '../resources.js';
import { Lifecycle } from '../lifecycle.js';
import { loadResources, openLockedMirror } from '../resources.js';

/** Applies pending migrations alone; a writer, so it refuses while another writer holds the mirror. */
export async function migrateCommand(flags: GlobalFlags, secrets: string[]): Promise<void> {
  const res = loadResources(flags, secrets);
  const life = new Lifecycle();
  try {
    const { applied } = await openLockedMirror(res, life, { wait: false });
    process.stdout.write(
      applied.length === 0 ? 'The mirror schema is up to date.\n' : `Applied ${applied.length} migration(s): ${applied.join(', ')}.\n`,
    );
  } finally {
    await life.close();
  }
}

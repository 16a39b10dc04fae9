/**
 * What a process that mirrors a workspace opens, whoever runs it: the CLI's commands, the
 * daemon and the fleet's slices. Below src/cli and src/fleet, which both use it.
 */
export { exitAtOnce, Lifecycle } from './lifecycle.js';
export {
  loadResources,
  openClient,
  openLockedMirror,
  openMirror,
  resourcesFor,
  syncContext,
  takeWriterLock,
  type GlobalFlags,
  type Resources,
} from './resources.js';
export { openWriterSession, type WriterMirror, type WriterSessionOptions } from './writer.js';

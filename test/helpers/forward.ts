/**
 * An object that forwards every property to whatever `current()` returns at the time of use, so a
 * describe block can hand out a per-test resource (opened in beforeEach) as a plain const.
 */
export function forwardTo<T extends object>(current: () => T): T {
  return new Proxy({} as T, {
    get(_target, prop) {
      const target = current();
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

import type { DialectOptions } from './types.js';

/**
 * How answers are written out: the serve-time part of a dialect. The simulator's clock keeps
 * milliseconds whatever the dialect; a second form shows each instant truncated to its second.
 */
export interface Spelling {
  /** An instant (epoch ms) as the API shows it. */
  stamp: (ms: number) => string;
  extraFields: boolean;
  richTeam: boolean;
  /** True when this spelling writes exactly what the original (default) spelling writes. */
  original: boolean;
}

/** The instant a timestamp form shows: the second it falls in, for second forms. */
export function shownMs(timestamps: DialectOptions['timestamps'], ms: number): number {
  return timestamps === 's-z' || timestamps === 's-offset' ? Math.floor(ms / 1000) * 1000 : ms;
}

export function stampFormatter(timestamps: DialectOptions['timestamps']): (ms: number) => string {
  switch (timestamps) {
    case 'ms-z':
      return (ms) => new Date(ms).toISOString();
    case 's-z':
      return (ms) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
    case 'ms-offset':
      return (ms) => `${new Date(ms).toISOString().slice(0, 23)}+00:00`;
    case 's-offset':
      return (ms) => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
  }
}

/** The spelling of API answers under dialect `d`. */
export function servedSpelling(d: DialectOptions): Spelling {
  return {
    stamp: stampFormatter(d.timestamps),
    extraFields: d.extraFields,
    richTeam: d.teamShape === 'rich',
    original: d.timestamps === 'ms-z' && !d.extraFields && d.teamShape === 'plain',
  };
}

/**
 * The spelling of control.truth(): the original form of the instants the API shows (so a second
 * dialect's truth reads `...05.000Z`), plain teams, no extra fields.
 */
export function truthSpelling(d: DialectOptions): Spelling {
  const precise = d.timestamps === 'ms-z' || d.timestamps === 'ms-offset';
  return {
    stamp: precise ? (ms) => new Date(ms).toISOString() : (ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString(),
    extraFields: false,
    richTeam: false,
    original: precise,
  };
}

/**
 * `since` compares with the shown instant: under a second form an event shown as `...05Z` is at
 * or after `since` exactly when its shown second is, so `since` is rounded up to the second.
 */
export function sinceForShown(timestamps: DialectOptions['timestamps'], sinceMs: number): number {
  return timestamps === 's-z' || timestamps === 's-offset' ? Math.ceil(sinceMs / 1000) * 1000 : sinceMs;
}

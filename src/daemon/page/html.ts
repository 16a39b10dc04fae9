/**
 * The one way text reaches the status page. `markup` escapes every interpolated value unless it is
 * markup this module made (a {@link Markup}, from `markup` itself or {@link trusted}), so an upstream
 * string (a quarantine reason, an error body, an id) always shows as text.
 */
export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and for quoted attribute values alike. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

type Part = Markup | string | number | null | undefined | readonly Part[];

function render(value: Part): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Markup) return value.text;
  if (Array.isArray(value)) return (value as readonly Part[]).map(render).join('');
  return escapeHtml(value);
}

/** A template whose values are escaped; arrays are joined; null and undefined render nothing. */
export function markup(strings: TemplateStringsArray, ...values: Part[]): Markup {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new Markup(out);
}

/** Markup written by this code (never built from upstream text), e.g. the page's style sheet. */
export function trusted(text: string): Markup {
  return new Markup(text);
}

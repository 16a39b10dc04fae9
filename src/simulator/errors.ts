/** One error body shape everywhere: `{ error: { code, message, details? } }`. */
export interface FieldIssue {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: FieldIssue[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  body(): string {
    const error: Record<string, unknown> = { code: this.code, message: this.message };
    if (this.details && this.details.length > 0) error.details = this.details;
    return JSON.stringify({ error });
  }
}

export function notFound(what: string, id: string): ApiError {
  return new ApiError(404, 'not_found', `No ${what} has the id ${JSON.stringify(id)}.`);
}

export function invalid(field: string, message: string): ApiError {
  return new ApiError(422, 'validation_failed', `${field}: ${message}`, [{ field, message }]);
}

/** Collects every field problem of one request body so a caller sees them all at once. */
export class Issues {
  readonly list: FieldIssue[] = [];

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  throwIfAny(): void {
    if (this.list.length === 0) return;
    const summary = this.list.map((i) => `${i.field}: ${i.message}`).join('; ');
    throw new ApiError(422, 'validation_failed', summary, this.list);
  }
}

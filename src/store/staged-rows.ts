/**
 * Rows to load through a staging table, for a dialect whose `loadsRowsByCopy` capability says so
 * (dialect.ts). The store sends them as the one parameter of the statement that moves them from
 * the stage into their table (`stagedInsertText`), and the PostgreSQL client (postgres-copy.ts)
 * fills the stage with COPY before it runs that statement, all on the statement's connection.
 */
export class StagedRows {
  constructor(
    readonly table: string,
    readonly columns: readonly string[],
    readonly rows: readonly (readonly unknown[])[],
  ) {}

  /** The session's staging table for `table`: created on first use, empty between statements. */
  get stage(): string {
    return stageOf(this.table);
  }
}

export const stageOf = (table: string) => `wsmirror_stage_${table}`;

/**
 * Rows to COPY straight into their table, for a dialect whose `loadsRowsByCopy` capability says
 * so: the one parameter of a `copy ... from stdin` statement (`appendRows` in sql.ts), which the
 * PostgreSQL client (postgres-copy.ts) streams on the statement's connection. Only for rows that
 * no stored row and no other row of the set can conflict with: COPY has no ON CONFLICT clause, so a
 * conflict fails the statement (docs/sync.md, "Appended rows are copied straight into their tables").
 */
export class CopiedRows {
  constructor(readonly rows: readonly (readonly unknown[])[]) {}
}

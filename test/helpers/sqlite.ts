// A second, independent connection to a store file through node:sqlite, for tests that look at
// what is committed or write a file as another version (or another program) would have.
import { DatabaseSync } from 'node:sqlite';

export interface SqliteFile {
  exec(sql: string): void;
  /** `PRAGMA name`: its value. */
  pragma(name: string): unknown;
  /** The first column of the first row. */
  value(sql: string, ...params: Array<string | number | null>): unknown;
  /** Every row, as arrays. */
  rows(sql: string, ...params: Array<string | number | null>): unknown[][];
  run(sql: string, ...params: Array<string | number | null>): void;
  close(): void;
}

export function openSqliteFile(file: string, options: { readonly?: boolean } = {}): SqliteFile {
  const db = new DatabaseSync(file, { readOnly: options.readonly ?? false });
  const arrays = (sql: string) => {
    const statement = db.prepare(sql);
    statement.setReturnArrays(true);
    return statement;
  };
  return {
    exec: (sql) => db.exec(sql),
    pragma: (name) => (arrays(`PRAGMA ${name}`).get() as unknown as unknown[] | undefined)?.[0],
    value: (sql, ...params) => (arrays(sql).get(...params) as unknown as unknown[] | undefined)?.[0],
    rows: (sql, ...params) => arrays(sql).all(...params) as unknown as unknown[][],
    run: (sql, ...params) => {
      db.prepare(sql).run(...params);
    },
    close: () => db.close(),
  };
}

/**
 * Without a header, the columns are named after the widest record of the first batch (up to 512
 * records): a later, wider record still keeps all its cells, it only has no column name.
 */
export function generatedHeader(records: readonly (readonly string[])[]): string[] {
  const width = Math.max(0, ...records.map((record) => record.length));
  return Array.from({ length: width }, (_, i) => `column_${i + 1}`);
}

// The read phase's public face: what the pipeline, the writer and the prepare phase import.
export { openCsv, type CsvSource, type ReadOptions, type SheetOrigin } from './open-csv.js';
export { openSource, type SourceOptions } from './open-source.js';
export type { SheetCell, SheetValue } from './sheet-cells.js';
export { fromBytes, toBytes, hasInvalidUtf8 } from './byte-string.js';
export { assertDistinctFiles, type NamedFile } from './distinct-files.js';
export { isWorkbookFile } from './file-kind.js';
export type { RecordDelimiter } from './detect-layout.js';
export type { RecordCount } from './record-estimate.js';

// The delimiter and the header's line ending, told from the first lines (docs/cli-contract.md "Input
// files": Delimiter, Line endings). Both come from one quote-aware scan, because a delimiter or a
// line ending inside a quoted cell is content, not structure.

export type RecordDelimiter = '\n' | '\r\n' | '\r';

export interface Layout {
  delimiter: string;
  /** How the header line ends ('\n' when the file is one line with no ending). */
  recordDelimiter: RecordDelimiter;
  /** The text held the header line's end (or the whole file): false means read a longer head. */
  headerEnded: boolean;
}

/** In the contract's order, which is also the order that wins a tie: comma first. */
const CANDIDATES = [',', ';', '\t', '|'];

/** Enough lines to see whether a delimiter splits them consistently. */
const SAMPLE_RECORDS = 50;

/** Share of the sampled data lines that must have the header's field count to call it consistent. */
const CONSISTENT = 0.9;

interface ScannedRecord {
  fields: number;
  ending: RecordDelimiter | '';
}

/**
 * Splits `text` into records the way csv-parse does with relax_quotes: a quote opens a quoted cell
 * only at the start of a cell, "" inside one is a quote, and blank lines are not records. The last
 * record is dropped when the text is only the head of the file (it may be cut), unless it is the
 * only one.
 */
function scanRecords(text: string, delimiter: string, complete: boolean): ScannedRecord[] {
  const records: ScannedRecord[] = [];
  const length = text.length;
  let i = 0;
  while (i < length && records.length < SAMPLE_RECORDS) {
    const start = i;
    let fields = 1;
    let cellStart = true;
    let quoted = false;
    let ending: RecordDelimiter | '' = '';
    for (; i < length; i += 1) {
      const c = text[i];
      if (quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') i += 1;
          else quoted = false;
        }
      } else if (c === '\r' || c === '\n') {
        ending = c === '\r' && text[i + 1] === '\n' ? '\r\n' : c;
        break;
      } else if (c === delimiter) {
        fields += 1;
        cellStart = true;
        continue;
      } else if (c === '"' && cellStart) {
        quoted = true;
      }
      cellStart = false;
    }
    const blank = i === start;
    i += ending.length;
    if (!blank) records.push({ fields, ending });
  }
  if (!complete && records.length > 1 && records.length < SAMPLE_RECORDS) records.pop();
  return records;
}

interface Candidate {
  delimiter: string;
  records: ScannedRecord[];
  headerFields: number;
  /** Share of the data lines that have as many fields as the header (1 when there are none). */
  agreement: number;
}

function judge(text: string, delimiter: string, complete: boolean): Candidate {
  const records = scanRecords(text, delimiter, complete);
  const headerFields = records[0]?.fields ?? 1;
  const data = records.slice(1);
  const agreeing = data.filter((record) => record.fields === headerFields).length;
  return { delimiter, records, headerFields, agreement: data.length === 0 ? 1 : agreeing / data.length };
}

/**
 * Among the candidates that split the header at all, the consistent ones (the data lines mostly
 * have the header's field count) win, most fields first; when none is consistent (a ragged file),
 * the one the data lines agree with most. Comma when nothing splits, and on every tie.
 */
function best(candidates: Candidate[]): Candidate {
  const splitting = candidates.filter((candidate) => candidate.headerFields > 1);
  const consistent = splitting.filter((candidate) => candidate.agreement >= CONSISTENT);
  if (consistent.length > 0) return firstBest(consistent, (a, b) => a.headerFields - b.headerFields);
  if (splitting.length > 0) return firstBest(splitting, (a, b) => a.agreement - b.agreement || a.headerFields - b.headerFields);
  return candidates[0]!;
}

/** The greatest by `compare`; the earliest of equals, so the candidates' order breaks ties. */
function firstBest(candidates: Candidate[], compare: (a: Candidate, b: Candidate) => number): Candidate {
  return candidates.reduce((chosen, candidate) => (compare(candidate, chosen) > 0 ? candidate : chosen));
}

/**
 * The delimiter under which `text` reads as a table from its first line: the header splits into
 * several fields and at least one line below agrees with it; undefined when none does.
 */
export function fitsAsTable(text: string, complete: boolean, delimiter?: string): string | undefined {
  const candidates = delimiter === undefined ? CANDIDATES.map((d) => judge(text, d, complete)) : [judge(text, delimiter, complete)];
  const fitting = candidates.filter((c) => c.headerFields > 1 && c.records.length > 1 && c.agreement >= CONSISTENT);
  return fitting.length > 0 ? best(fitting).delimiter : undefined;
}

/** The fields of the first record of `text` under `delimiter` (quotes respected). */
export function fieldsOfFirstLine(text: string, delimiter: string): number {
  return scanRecords(text, delimiter, true)[0]?.fields ?? 1;
}

/**
 * The layout of a file from `text`, its head decoded (or a byte string: the characters that matter
 * are ASCII). `delimiter` is the one the user gave, if any.
 */
export function detectLayout(text: string, complete: boolean, delimiter?: string): Layout {
  const chosen = delimiter === undefined ? best(CANDIDATES.map((d) => judge(text, d, complete))) : judge(text, delimiter, complete);
  const ending = chosen.records[0]?.ending ?? '';
  return { delimiter: chosen.delimiter, recordDelimiter: ending || '\n', headerEnded: complete || ending !== '' };
}

// Generated inputs: a deterministic contacts CSV of N rows (distinct emails), and a result store
// pre-filled with the sandbox's own answers for those emails. Both are cached under bench/out/
// (gitignored) and rebuilt when missing or incomplete.
import fs from 'node:fs';
import path from 'node:path';
import { ensureOutDir, log, removeStore } from './util.js';

const FIRST = [
  'james',
  'mary',
  'john',
  'patricia',
  'robert',
  'jennifer',
  'michael',
  'linda',
  'william',
  'elizabeth',
  'david',
  'barbara',
  'richard',
  'susan',
  'joseph',
  'jessica',
  'thomas',
  'sarah',
  'charles',
  'karen',
  'amelie',
  'jose',
  'zoe',
  'noah',
];
const LAST = [
  'smith',
  'johnson',
  'williams',
  'brown',
  'jones',
  'garcia',
  'miller',
  'davis',
  'rodriguez',
  'martinez',
  'hernandez',
  'lopez',
  'gonzalez',
  'wilson',
  'anderson',
  'thomas',
  'taylor',
  'moore',
  'jackson',
  'martin',
  'lee',
  'perez',
  'thompson',
  'white',
];
const COMPANY = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'hooli',
  'vandelay',
  'stark-industries',
  'wayne-enterprises',
  'wonka',
  'tyrell',
  'cyberdyne',
  'soylent',
  'massive-dynamic',
  'aperture',
  'black-mesa',
  'oscorp',
  'piedpiper',
  'dunder-mifflin',
  'gringotts',
  'monarch',
];
const TITLE = [
  'Head of Sales',
  'Account Executive',
  'VP Marketing',
  'CTO',
  'Software Engineer',
  'Office Manager',
  'Founder',
  'Growth Lead, EMEA',
  'Data Analyst',
  'Procurement "Lead"',
];
const CITY = ['Berlin', 'Austin', 'Lyon', 'Toronto', 'Osaka', 'Leeds', 'Porto', 'Denver'];

export const HEADER = ['id', 'first_name', 'last_name', 'email', 'company', 'title', 'city', 'phone'];

function quote(cell) {
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** Row i (0-based) of the generated file; the email is unique per row. */
export function contactRow(i) {
  const first = FIRST[i % FIRST.length];
  const last = LAST[Math.floor(i / FIRST.length) % LAST.length];
  const company = COMPANY[(i * 7) % COMPANY.length];
  const email = `${first}.${last}.${i}@${company}.com`;
  const title = TITLE[(i * 3) % TITLE.length];
  const city = CITY[(i * 5) % CITY.length];
  const phone = `+1-555-${String(i % 10_000_000).padStart(7, '0')}`;
  return [String(i + 1), first[0].toUpperCase() + first.slice(1), last[0].toUpperCase() + last.slice(1), email, company, title, city, phone];
}

export function contactEmail(i) {
  return contactRow(i)[3];
}

/** bench/out/contacts-<rows>.csv, generated if missing. */
export function contactsCsv(rows) {
  const dir = ensureOutDir();
  const file = path.join(dir, `contacts-${rows}.csv`);
  const done = `${file}.done`;
  if (fs.existsSync(file) && fs.existsSync(done)) return file;
  log(`generating ${file} (${rows} rows)`);
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  let chunk = `${HEADER.join(',')}\n`;
  for (let i = 0; i < rows; i++) {
    chunk += `${contactRow(i).map(quote).join(',')}\n`;
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk);
      chunk = '';
    }
  }
  fs.writeSync(fd, chunk);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  fs.writeFileSync(done, `${rows}\n`);
  return file;
}

/** Accented spellings of some generated first names (issue 13: files that are not plain ASCII). */
const ACCENTED = [
  ['Amelie', 'Amélie'],
  ['Jose', 'José'],
  ['Zoe', 'Zoë'],
  ['Noah', 'Noé'],
];

/**
 * bench/out/contacts-<rows>-<encoding>.csv: contacts-<rows>.csv with some first names accented
 * (the emails, hence the store's keys, unchanged), saved as 'utf-8', 'windows-1252' or 'utf-16le'
 * (with a byte-order mark, as spreadsheets save it). Generated if missing.
 */
export function accentedCsv(rows, encoding) {
  const file = path.join(ensureOutDir(), `contacts-${rows}-${encoding}.csv`);
  const done = `${file}.done`;
  if (fs.existsSync(file) && fs.existsSync(done)) return file;
  log(`generating ${file}`);
  let text = fs.readFileSync(contactsCsv(rows), 'utf8');
  for (const [plain, accented] of ACCENTED) text = text.replaceAll(`,${plain},`, `,${accented},`);
  const bytes =
    encoding === 'utf-16le'
      ? Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])
      : encoding === 'windows-1252'
        ? Buffer.from(text, 'latin1') // é, ë: the same code points in both
        : Buffer.from(text, 'utf8');
  fs.writeFileSync(`${file}.tmp`, bytes);
  fs.renameSync(`${file}.tmp`, file);
  fs.writeFileSync(done, `${rows}\n`);
  return file;
}

/**
 * bench/out/contacts-<rows>.xlsx: the rows of contacts-<rows>.csv as a workbook (the id a number,
 * the rest text), written with exceljs's streaming WorkbookWriter (a development dependency: another
 * writer than the one measured, with shared strings as Excel writes them). Generated if missing.
 */
export async function contactsXlsx(rows) {
  const file = path.join(ensureOutDir(), `contacts-${rows}.xlsx`);
  const done = `${file}.done`;
  if (fs.existsSync(file) && fs.existsSync(done)) return file;
  log(`generating ${file} (${rows} rows)`);
  const { default: ExcelJS } = await import('exceljs');
  const tmp = `${file}.tmp`;
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: tmp, useSharedStrings: true });
  const sheet = workbook.addWorksheet('Contacts');
  sheet.addRow(HEADER).commit();
  for (let i = 0; i < rows; i++) {
    const row = contactRow(i);
    sheet.addRow([Number(row[0]), ...row.slice(1)]).commit();
  }
  sheet.commit();
  await workbook.commit();
  fs.renameSync(tmp, file);
  fs.writeFileSync(done, `${rows}\n`);
  return file;
}

/**
 * bench/out/store-<rows>.sqlite holding, for service 'bench', the sandbox's answer to every email
 * of contacts-<rows>.csv (normalized exactly as enrich normalizes them). Built if missing.
 * `every: 2` (store-<rows>-half.sqlite): every other row's answer only, for the mixed memory run.
 */
export async function prefilledStore(rows, { every = 1 } = {}) {
  const dir = ensureOutDir();
  const file = path.join(dir, every === 1 ? `store-${rows}.sqlite` : every === 2 ? `store-${rows}-half.sqlite` : `store-${rows}-every${every}.sqlite`);
  const done = `${file}.done`;
  // A store of an older schema would be migrated inside the timed run: build it again instead.
  if (fs.existsSync(file) && fs.existsSync(done) && (await schemaOf(file)) === (await import('../../dist/store/schema.js')).SCHEMA_VERSION) return file;
  removeStore(file);
  const { ResultStore, normalizeKey } = await import('../../dist/index.js');
  const { sandboxAnswer } = await import('../../dist/sandbox/data.js');
  // The answers' cells as a run keeps them (the store itself renders none: store/answer-cells.ts).
  const { ANSWER_CELLS } = await import('../../dist/write/columns.js');
  log(`pre-filling ${file} with ${Math.ceil(rows / every)} sandbox answers`);
  const started = Date.now();
  const store = ResultStore.open({ path: file, flushBatchSize: 5000, flushIntervalMs: 60_000 });
  try {
    for (let i = 0; i < rows; i += every) {
      const normalized = normalizeKey('email', contactEmail(i));
      if (!normalized.ok) throw new Error(`generated email ${contactEmail(i)} is invalid: ${normalized.reason}`);
      const a = sandboxAnswer('lookup_email', normalized.key);
      if (a.kind === 'rejected') throw new Error(`the sandbox rejects generated email ${normalized.key}`);
      store.put(
        'bench',
        'lookup_email',
        normalized.key,
        { found: a.kind === 'found', data: a.data, cells: ANSWER_CELLS.render('lookup_email', a.data) },
        'warm',
      );
    }
  } finally {
    store.close();
  }
  fs.writeFileSync(done, `${rows}\n`);
  log(`pre-filled ${Math.ceil(rows / every)} answers in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return file;
}

/** PRAGMA user_version of a store file (its schema version). */
async function schemaOf(file) {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return db.prepare('PRAGMA user_version').get().user_version;
  } finally {
    db.close();
  }
}

/** A copy of a pre-filled store (built for service 'bench') whose answers belong to `baseUrl`: the CLI names the service by the sandbox's base URL. */
export async function copyStoreFor(source, target, baseUrl) {
  fs.copyFileSync(source, target);
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(target);
  try {
    db.prepare('UPDATE services SET name = ? WHERE name = ?').run(baseUrl, 'bench');
  } finally {
    db.close();
  }
}

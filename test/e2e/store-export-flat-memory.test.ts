// `store export` in flat memory whatever stdout is (docs/cli-contract.md, "Store housekeeping"): a
// pipe whose reader is slow is waited for, so the lines never pile up in the process; with
// --history, the earlier answers come from one cursor beside the answers'. Sized to run in
// seconds: 20 000 entries, each with an earlier answer, through a pipe read a second late, under
// a heap (--max-old-space-size=40) that the whole export (about 30 MB of lines) would not fit in;
// the same at 5 000 to see the peak stay where it was. The 200 000-entry measurement is in the
// report of the change (docs/reference.md, "store export").
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { beforeAll, describe, expect, it } from 'vitest';
import { ResultStore } from '../../src/store/result-store.js';
import { CLI_PATH, tempDir } from '../helpers/cli.js';
import { run, runSync } from '../helpers/processes.js';
import { personAnswer } from '../helpers/person-answer.js';

/** GNU time, to read the CLI's peak memory. */
const GNU_TIME = process.platform !== 'win32' && runSync('/usr/bin/time', ['-f', '%M', 'true']).status === 0;
const SERVICE = 'https://api.example.test/v2';

/** A person answer of about 700 bytes of JSON, as the API gives. */
const answer = (key: string, title: string): string => JSON.stringify(personAnswer(key, title));

/** A store of `n` entries, each with one earlier answer it replaced (a new title), written in one transaction. */
function storeOf(n: number): string {
  const file = path.join(tempDir(), `store-${n}.sqlite`);
  ResultStore.open({ path: file }).close();
  const db = new DatabaseSync(file);
  db.prepare('INSERT INTO services (name) VALUES (?)').run(SERVICE);
  const result = db.prepare("INSERT INTO results (service_id, op, key, found, data, fetched_at, run_id) VALUES (1, 'lookup_email', ?, 1, ?, 2000000, 'r')");
  const earlier = db.prepare(
    "INSERT INTO history (service_id, op, key, fetched_at, replaced_at, found, same, data, refused, reported) VALUES (1, 'lookup_email', ?, 1000000, 2000000, 1, 0, ?, NULL, 1)",
  );
  db.exec('BEGIN');
  for (let i = 0; i < n; i += 1) {
    const key = `person.${i}@company${i % 97}.com`;
    result.run(key, answer(key, 'CTO'));
    earlier.run(key, answer(key, 'Engineer'));
  }
  db.exec('COMMIT');
  db.close();
  return file;
}

/** `store export --history` of `store` under a 40 MB heap into a pipe read a second late; its status, its lines and its peak memory (KiB, with GNU time). */
async function exportThroughSlowPipe(store: string): Promise<{ code: number; lines: string[]; peakKb: number | undefined }> {
  const dir = tempDir();
  const out = path.join(dir, 'out.jsonl');
  const peak = path.join(dir, 'peak');
  const timed = GNU_TIME ? `/usr/bin/time -f %M -o "${peak}" ` : '';
  const script = `${timed}"$0" --max-old-space-size=40 "$1" store export --history --store "$2" | (sleep 1; cat > "$3")`;
  const r = await run('bash', ['-c', `set -o pipefail; ${script}`, process.execPath, CLI_PATH, store, out], {
    timeoutMs: 60_000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  expect(r.stderr).toBe('');
  return {
    code: r.code ?? -1,
    lines: fs.readFileSync(out, 'utf8').split('\n').slice(0, -1),
    peakKb: GNU_TIME ? Number(fs.readFileSync(peak, 'utf8').trim()) : undefined,
  };
}

describe('store export --history through a pipe read slowly', () => {
  let small: string;
  let large: string;
  beforeAll(() => {
    small = storeOf(5_000);
    large = storeOf(20_000);
  });

  it('exits 0 with every line, each answer followed by the one it replaced, in a heap too small to hold them all', async () => {
    const { code, lines } = await exportThroughSlowPipe(large);
    expect(code).toBe(0);
    expect(lines).toHaveLength(40_000);
    const records = lines.map(
      (line) => JSON.parse(line) as { key: string; stored_at: string; replaced_at: string | null; answer: { lead: { title: string } } },
    );
    const keys = records.filter((_, i) => i % 2 === 0).map((r) => r.key);
    expect(new Set(keys).size).toBe(20_000);
    // In key order, as text: the order of the store's index.
    expect(keys).toEqual([...keys].sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1)));
    records.forEach((record, i) => {
      if (i % 2 === 0) expect([record.replaced_at, record.answer.lead.title]).toEqual([null, 'CTO']);
      else expect([record.key, record.replaced_at, record.answer.lead.title]).toEqual([records[i - 1]!.key, records[i - 1]!.stored_at, 'Engineer']);
    });
  });

  // Peak memory through GNU time: skipped where /usr/bin/time is not GNU's (macOS, Alpine's busybox).
  it.runIf(GNU_TIME)(
    'peaks at the same memory for 5 000 entries and for 20 000 (flat)',
    { meta: { skipReason: 'no GNU time at /usr/bin/time to read the peak memory' } },
    async () => {
      const [five, twenty] = [await exportThroughSlowPipe(small), await exportThroughSlowPipe(large)];
      expect([five.code, twenty.code]).toEqual([0, 0]);
      // Four times the lines (about 24 MB more of them): within 16 MB of the smaller export's peak.
      expect(twenty.peakKb! - five.peakKb!).toBeLessThan(16 * 1024);
    },
  );

  it('a reader that goes away (| head -1): the export stops, quietly, exit 0', async () => {
    const r = await run('bash', ['-c', 'set -o pipefail; "$0" "$1" store export --history --store "$2" | head -1', process.execPath, CLI_PATH, large], {
      timeoutMs: 60_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toMatchObject({ key: 'person.0@company0.com', replaced_at: null });
  });
});

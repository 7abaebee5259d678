// A stream input (a named pipe, standard input) given up on after a stop: reading ends once it has
// been silent for 1 s, and every line that arrived whole is read, the last one too (the parser
// holds a line back until it sees what follows its line ending); a line half written is not.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openCsv } from '../../src/read/index.js';
import { batchesUntilIdle } from '../../src/run/input-wait.js';

/** Enough whole lines that the reader has its first 64 KiB and starts. */
const OPENING = `email\n${Array.from({ length: 3000 }, (_, i) => `person.${i}@example.com`).join('\n')}\n`;

/** The records read from a stream that sent `opening` then `last`, stopped and left silent. */
async function readUntilCut(last: string, lineEnd = '\n'): Promise<{ emails: string[]; cuts: number }> {
  const stream = new PassThrough();
  stream.write(OPENING.replaceAll('\n', lineEnd));
  const source = await openCsv(stream);
  const halt = new AbortController();
  let cuts = 0;
  const emails: string[] = [];
  let wrote = false;
  for await (const batch of batchesUntilIdle(source, halt.signal, () => (cuts += 1))) {
    emails.push(...batch.map((record) => record[0]!));
    if (!wrote) {
      wrote = true;
      stream.write(last);
      setTimeout(() => halt.abort(), 50);
    }
  }
  return { emails, cuts };
}

describe.concurrent('a stream input given up on after a stop', () => {
  it('reads every whole line, the last one too, then says where it stopped', async () => {
    const { emails, cuts } = await readUntilCut('last.one@example.com\n');
    expect(emails).toHaveLength(3001);
    expect(emails.at(-1)).toBe('last.one@example.com');
    expect(cuts).toBe(1);
  });

  it('reads the last whole line of CRLF lines too', async () => {
    const { emails } = await readUntilCut('last.one@example.com\r\n', '\r\n');
    expect(emails.at(-1)).toBe('last.one@example.com');
    expect(emails).toHaveLength(3001);
  });

  it('reads the last whole line of lines that end in CR alone (an old Mac file)', async () => {
    const { emails } = await readUntilCut('last.one@example.com\r', '\r');
    expect(emails.at(-1)).toBe('last.one@example.com');
    expect(emails).toHaveLength(3001);
  });

  it('does not read a line half written', async () => {
    const { emails, cuts } = await readUntilCut('whole@example.com\nhalf.writ');
    expect(emails.at(-1)).toBe('whole@example.com');
    expect(emails).toHaveLength(3001);
    expect(cuts).toBe(1);
  });

  it('does not read a line whose quoted cell is still open at a line ending inside it', async () => {
    const { emails, cuts } = await readUntilCut('whole@example.com\n"open@example.com\n');
    expect(emails.at(-1)).toBe('whole@example.com');
    expect(emails).toHaveLength(3001);
    expect(cuts).toBe(1);
  });
});

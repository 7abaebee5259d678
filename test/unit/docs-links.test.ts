// Every relative link of the README and of docs/ leads somewhere: to a file of the repository and,
// when it names an anchor, to a heading of that file (GitHub's anchors: lower case, punctuation
// dropped, spaces to hyphens, a repeated heading numbered). The reference moved out of the README
// into docs/, so a link written for one place and left in the other fails here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

/** The text outside fenced code blocks and inline code: a link shown as code is no link. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** The anchors GitHub gives the headings of a markdown text. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    found.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return found;
}

/** Each relative link of `file` that does not resolve, as `file:line → target (why)`. */
function brokenLinks(file: string, markdown: string, read: (file: string) => string | undefined): string[] {
  const broken: string[] = [];
  prose(markdown).forEach((line, i) => {
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not the repository's
      const [where, anchor] = target.split('#') as [string, string | undefined];
      const linked = where === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(where)));
      const text = read(linked);
      const at = `${file}:${i + 1} → ${target}`;
      if (text === undefined) broken.push(`${at} (no such file)`);
      else if (anchor !== undefined && !anchors(text).has(anchor)) broken.push(`${at} (no such heading)`);
    }
  });
  return broken;
}

function readRepoFile(file: string): string | undefined {
  const full = path.join(REPO_ROOT, file);
  if (!fs.existsSync(full)) return undefined;
  return fs.statSync(full).isDirectory() ? '' : fs.readFileSync(full, 'utf8');
}

const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('links between the README and docs/', () => {
  it.each(DOCUMENTS)('every relative link of %s resolves to a file and a heading', (file) => {
    expect(brokenLinks(file, readRepoFile(file)!, readRepoFile)).toEqual([]);
  });

  it('README links into the reference in docs/', () => {
    const readme = readRepoFile('README.md')!;
    for (const doc of ['docs/reference.md', 'docs/library.md', 'docs/development.md']) expect(readme).toContain(`](${doc}`);
  });

  it('finds a link to a missing heading, a missing file and a heading made of code', () => {
    const files: Record<string, string> = {
      'README.md':
        '# Top\n\nSee [x](docs/a.md#a-b), [y](docs/a.md#nope), [z](docs/gone.md), [w](#top), [v](docs/a.md#--with-mxwhois).\n\n```\n[not a link](nowhere.md)\n```\n',
      'docs/a.md': '# A\n\n## A: b\n\n### `--with mx,whois`\n',
    };
    const broken = brokenLinks('README.md', files['README.md']!, (f) => files[f]);
    expect(broken).toEqual(['README.md:3 → docs/a.md#nope (no such heading)', 'README.md:3 → docs/gone.md (no such file)']);
  });

  it('numbers a repeated heading as GitHub does', () => {
    expect([...anchors('## Notes\n## Notes\n## Notes\n')]).toEqual(['notes', 'notes-1', 'notes-2']);
  });
});

describe('the README as a front page', () => {
  const readme = readRepoFile('README.md')!;
  it('starts with the two commands of the first run and the tests, as its first two code blocks', () => {
    const blocks = [...readme.matchAll(/^```\w*\n([\s\S]*?)^```/gm)].map((m) => m[1]);
    expect(blocks.slice(0, 2)).toEqual(['npm install && npx lead-enrich enrich fixtures/contacts.csv --sandbox\n', 'npm install && npm test\n']);
  });

  it('stays short enough to be read to the end (at most 300 lines), the reference being in docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toMatch(/^### One file$/m);
  });
});

// The documents users read (README.md and docs/*.md) and their code blocks, for the tests that run
// what the documents show: an example is found wherever it was moved to, not in one file only.
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './cli.js';

/** README.md, then docs/*.md in name order, as paths relative to the repository. */
export function documents(): string[] {
  const docs = fs
    .readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort();
  return ['README.md', ...docs.map((f) => `docs/${f}`)];
}

export function readDocument(file: string): string {
  return fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
}

/** The text of a `## title` section of a document, up to the next `## ` heading. */
export function section(file: string, title: string): string {
  const text = readDocument(file);
  const start = text.indexOf(`\n## ${title}\n`);
  if (start === -1) throw new Error(`${file} has no "## ${title}" section`);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

/** The ```language blocks of a markdown text, in order. */
export function codeBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp('^```' + language + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1]!);
}

/** The ```language blocks of every document, each with the file it is in. */
export function allCodeBlocks(language: string): { file: string; code: string }[] {
  return documents().flatMap((file) => codeBlocks(readDocument(file), language).map((code) => ({ file, code })));
}

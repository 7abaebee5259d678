// What a CI runner makes of the files and lines a step writes: the step outputs as the runner reads
// $GITHUB_OUTPUT (its file-command parser: `name=value`, or `name<<DELIMITER` … `DELIMITER`), a job
// summary rendered as GitHub-flavoured Markdown (micromark with its GFM extension), and the lines
// a runner takes for workflow commands (`::` after white space, `##[` anywhere).
import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

/** The outputs as the runner reads them from a $GITHUB_OUTPUT file: a later value of a name wins. */
export function readStepOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line === '') continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      if (end < 0) throw new Error(`no end delimiter for ${heredoc[1]}`);
      outputs[heredoc[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) throw new Error(`not an output line: ${line}`);
    outputs[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return outputs;
}

/**
 * The job summary's Markdown rendered as GitHub-flavoured Markdown. Raw HTML is let through (GitHub
 * renders much of it), so that any tag the Markdown makes shows in htmlTags.
 */
export function renderSummary(markdown: string): string {
  return micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] });
}

/** The names of the tags in `html`, each once. */
export function htmlTags(html: string): string[] {
  return [...new Set([...html.matchAll(/<\/?([a-zA-Z][\w-]*)/g)].map((m) => m[1]!.toLowerCase()))].sort();
}

/** The lines a runner would take for a workflow command. */
export function commandLines(text: string): string[] {
  return text.split('\n').filter((line) => /^\s*::/.test(line) || line.includes('##['));
}

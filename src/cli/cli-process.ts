// The command line's process and the only place that exits it: every command reports a status
// through CliIo, and every error ends here as one line on stderr with its stable code (and with
// --json its JSON object: fatal.ts). Started by main.ts, the bin: from the bundle of it that
// `npm run build` makes (dist/cli/bundle.js), or as compiled on a Node.js too old for that bundle,
// to say which versions are needed; so what it imports before that check must load on any Node.
// A fatal line and the text outputs are shown with their control characters escaped
// (core/terminal-text.ts): a message may carry a header name or the API's words; and no line
// written begins a CI runner's workflow command, unless it is one lead-enrich means (core/log-lines.ts).
import { once } from 'node:events';
import { environment } from '../api/environment.js';
import { terminalText } from '../core/terminal-text.js';
import { logText } from '../core/log-lines.js';
import type { CliIo } from './io.js';
import { asksJson, fatalOf, tellFatal } from './fatal.js';
import { unsupportedNode } from '../core/node-version.js';

async function main(): Promise<void> {
  let status = 0;
  const io: CliIo = {
    out: (text) => process.stdout.write(logText(terminalText(text, 'lines'))),
    drained: () => (process.stdout.writableNeedDrain ? once(process.stdout, 'drain').then(() => undefined) : undefined),
    err: (line) => process.stderr.write(`${logText(line)}\n`),
    command: (line) => process.stderr.write(`${line}\n`),
    setStatus: (s) => {
      status = s;
    },
    isTty: Boolean(process.stderr.isTTY),
    json: asksJson(process.argv.slice(2)),
  };
  const tooOld = unsupportedNode(process.versions.node);
  if (tooOld) {
    await tellFatal(io, { status: 1, code: 'unsupported_node', message: tooOld, line: tooOld });
    process.stdout.write('', () => process.exit(1));
    return;
  }
  const { runCli, UsageError, speakingTo } = await import('./commands.js');
  // The fatal line too speaks to the command line's user (api/caller-words.ts).
  await speakingTo('cli', async () => {
    try {
      await runCli(process.argv.slice(2), io);
    } catch (error) {
      const fatal = fatalOf(error, (e) => e instanceof UsageError);
      status = fatal.status;
      // A mistake yargs found before `enrich` began: its CI step is told all the same (cli/ci/).
      if (io.onFatal === undefined && process.argv[2] === 'enrich') {
        const [{ openCiStep, ciArgsOf }, { noticeLines }] = await Promise.all([import('./ci/ci-choice.js'), import('./stderr-lines.js')]);
        await openCiStep(io, ciArgsOf(process.argv.slice(2)), undefined, noticeLines(io)).catch(() => undefined);
      }
      await tellFatal(io, fatal);
      if (fatal.code === 'unexpected' && environment('LEAD_ENRICH_DEBUG'))
        io.err(terminalText(error instanceof Error ? (error.stack ?? fatal.message) : fatal.message, 'lines'));
    }
  });
  // Let stdout drain before exiting: a piped JSON summary must not be cut short.
  process.stdout.write('', () => process.exit(status));
}

await main();

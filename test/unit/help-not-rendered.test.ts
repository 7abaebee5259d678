// A command that runs renders no help (src/cli/commands.ts, skipHelpRendering): yargs would render
// its command's whole help as the handler starts, for a showHelp() that lead-enrich never calls.
// Through yargs 18's internals: when an upgrade changes them, this says so (the CLI still works,
// only slower).
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import { skipHelpRendering } from '../../src/cli/commands.js';

type Usage = { hasCachedHelpMessage(): boolean };

/** A parser with one command, `greet --name`, that calls `handler` when it runs. */
function greeter(handler: () => void = () => undefined) {
  return yargs()
    .command('greet', 'say hello', (y) => y.option('name', { type: 'string', describe: 'who to greet' }), handler)
    .exitProcess(false);
}

/** The command run; whether yargs rendered (and kept) its help. */
async function rendered(skip: boolean): Promise<boolean> {
  let ran = false;
  const parser = greeter(() => {
    ran = true;
  });
  if (skip) skipHelpRendering(parser);
  await parser.parseAsync(['greet', '--name', 'Jane']);
  expect(ran).toBe(true);
  return (parser as unknown as { getInternalMethods(): { getUsageInstance(): Usage } }).getInternalMethods().getUsageInstance().hasCachedHelpMessage();
}

describe('help not rendered for a command that runs', () => {
  it('yargs renders it on its own (the cost skipHelpRendering saves)', async () => {
    expect(await rendered(false)).toBe(true);
  });

  it('skipHelpRendering stops it', async () => {
    expect(await rendered(true)).toBe(false);
  });

  it('--help still prints the whole help', async () => {
    const lines: string[] = [];
    const parser = greeter();
    skipHelpRendering(parser);
    await parser.help().parseAsync(['greet', '--help'], {}, (_error, _argv, output) => {
      lines.push(output);
    });
    expect(lines.join('')).toMatch(/--name\s+who to greet/);
  });
});

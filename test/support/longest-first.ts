// The order the files of a layer start in: the longest first, so that the last files to start are
// short ones and no worker is left running a two-minute file alone at the end. Vitest orders by the
// durations it cached from the last run on this machine, and without that cache (a fresh clone, CI)
// by file size, which put the simulation's small files, some of the longest, last. So the files that
// take longest have a measured cost here (seconds, an idle 2-core machine; the order is what counts);
// a file without one comes after them, by vitest's own order. Measured again when the suite's shape
// changes (docs/development.md, "How the suite spends its time").
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds a file takes alone on an idle 2-core machine, for the files that take longest. */
export const COSTS: Record<string, number> = {
  'test/e2e/install-from-clone.test.ts': 40,
  'test/e2e/nights.test.ts': 40,
  'test/e2e/cron-recipes-over-months.test.ts': 35,
  'test/e2e/reliability/durability.test.ts': 35,
  'test/e2e/spending.test.ts': 30,
  'test/e2e/answer-changes.test.ts': 30,
  'test/e2e/cluster.test.ts': 25,
  'test/e2e/help-examples.test.ts': 25,
  'test/e2e/readme-recipes.test.ts': 25,
  'test/e2e/cli-messages.test.ts': 20,
  'test/e2e/option-rules.test.ts': 20,
};

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const theirs = await super.sort(files);
    const cost = (spec: TestSpecification) => COSTS[path.relative(spec.project.config.root, spec.moduleId).split(path.sep).join('/')] ?? 0;
    // A stable sort: within a layer, the costed files by cost, then the rest in vitest's order.
    return theirs.map((spec, i) => ({ spec, i })).sort((a, b) => {
      const layer = (s: TestSpecification) => s.project.config.sequence.groupOrder;
      if (layer(a.spec) !== layer(b.spec) || a.spec.project.name !== b.spec.project.name) return a.i - b.i;
      return cost(b.spec) - cost(a.spec) || a.i - b.i;
    }).map(({ spec }) => spec);
  }
}

// The order the files of a layer start in: the longest first, so that the last files to start are
// short ones and no worker is left running a two-minute file alone at the end. Vitest orders by the
// durations it cached from the last run on this machine, and without that cache (a fresh clone, CI)
// by file size, which put the simulation's small files, among the longest, last. So the files that
// take longest have a measured cost here; a file without one comes after them, in vitest's order.
// Measured again when the suite's shape changes (docs/development.md, "How the suite spends its
// time").
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { COSTS } from './file-costs.js';

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const theirs = await super.sort(files);
    const cost = (spec: TestSpecification) => COSTS[path.relative(spec.project.config.root, spec.moduleId).split(path.sep).join('/')] ?? 0;
    // A stable sort: within a layer, the costed files by cost, then the rest in vitest's order.
    return theirs
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => {
        const layer = (s: TestSpecification) => s.project.config.sequence.groupOrder;
        if (layer(a.spec) !== layer(b.spec) || a.spec.project.name !== b.spec.project.name) return a.i - b.i;
        return cost(b.spec) - cost(a.spec) || a.i - b.i;
      })
      .map(({ spec }) => spec);
  }
}

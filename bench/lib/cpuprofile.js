// Reads a V8 .cpuprofile (node --cpu-prof) and lists the functions with the most self time.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './util.js';

/** [{ name, where, selfMs, share }], most self time first; `(idle)`/`(program)`/`(garbage collector)` kept. */
export function topSelfTime(file, limit = 20) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0));
  }
  const totals = new Map();
  let all = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    const f = node.callFrame;
    const url = f.url ? shorten(f.url) : '';
    const key = `${f.functionName || '(anonymous)'}\u0000${url}:${f.lineNumber + 1}`;
    totals.set(key, (totals.get(key) ?? 0) + us);
    all += us;
  }
  // Self time by where the code lives: a package of node_modules, a file of dist/, node's own.
  const byOwner = new Map();
  for (const [key, us] of totals) {
    const [name, where] = key.split('\u0000');
    const owner = ownerOf(name, where);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
  }
  const idle = [...totals].filter(([k]) => k.startsWith('(idle)')).reduce((s, [, v]) => s + v, 0);
  return {
    totalMs: all / 1000,
    busyMs: (all - idle) / 1000,
    owners: [...byOwner]
      .sort((a, b) => b[1] - a[1])
      .map(([owner, us]) => ({ owner, selfMs: us / 1000, busyShare: owner === '(idle)' ? NaN : us / (all - idle) })),
    top: [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([key, us]) => {
        const [name, where] = key.split('\u0000');
        return { name, where: where === ':0' ? '' : where, selfMs: us / 1000, share: us / all, busyShare: name === '(idle)' ? NaN : us / (all - idle) };
      }),
  };
}

function ownerOf(name, where) {
  if ((!where || where === ':0') && name.startsWith('(')) return name; // (garbage collector), (idle), (program)
  const file = where.replace(/:\d+$/, '');
  const nm = file.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 13).split('/');
    return `npm:${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (file.startsWith('dist/')) return file;
  if (file.startsWith('node:')) return 'node: (built-in modules)';
  if (name.startsWith('RegExp:')) return '(regular expressions)';
  return '(native / V8 builtins)';
}

function shorten(url) {
  const p = url.startsWith('file://') ? new URL(url).pathname : url;
  if (p.startsWith(ROOT)) return path.relative(ROOT, p);
  return p;
}

export function formatTop({ totalMs, busyMs, top, owners }) {
  const lines = ['self time by owner (not idle):'];
  for (const o of owners.filter((x) => x.owner !== '(idle)').slice(0, 14))
    lines.push(`${o.selfMs.toFixed(0).padStart(7)} ms ${(o.busyShare * 100).toFixed(1).padStart(5)} %  ${o.owner}`);
  lines.push('', `profile: ${totalMs.toFixed(0)} ms sampled, ${busyMs.toFixed(0)} ms not idle`, 'self ms  % busy  function  (where)');
  for (const t of top)
    lines.push(
      `${t.selfMs.toFixed(0).padStart(7)}  ${Number.isFinite(t.busyShare) ? (t.busyShare * 100).toFixed(1).padStart(5) : '    -'}  ${t.name}  ${t.where}`,
    );
  return lines.join('\n');
}

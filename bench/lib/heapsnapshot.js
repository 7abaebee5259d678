// Summarizes a V8 .heapsnapshot: live bytes (self size) and counts by constructor / node name.
import fs from 'node:fs';

export function heapSummary(file, limit = 20) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { node_fields: fields, node_types: types } = snap.snapshot.meta;
  const typeNames = types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const groups = new Map();
  let total = 0;
  const nodes = snap.nodes;
  for (let i = 0; i < nodes.length; i += width) {
    const type = typeNames[nodes[i + iType]];
    const size = nodes[i + iSize];
    total += size;
    let name = snap.strings[nodes[i + iName]];
    // Strings, code and arrays are grouped by type; objects and closures by constructor/function.
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '(string)';
    else if (type === 'code') name = '(compiled code)';
    else if (type === 'array') name = `(array) ${name}`.trim();
    else if (type === 'closure') name = `(closure) ${name || 'anonymous'}`;
    else if (type === 'hidden' || type === 'synthetic') name = `(${type}) ${name}`;
    const g = groups.get(name) ?? { name, bytes: 0, count: 0 };
    g.bytes += size;
    g.count += 1;
    groups.set(name, g);
  }
  return { total, top: [...groups.values()].sort((a, b) => b.bytes - a.bytes).slice(0, limit) };
}

export function formatHeap({ total, top }) {
  const lines = [`live JS heap in the snapshot: ${(total / 1048576).toFixed(1)} MB`, '    MB   count  constructor / kind'];
  for (const g of top) lines.push(`${(g.bytes / 1048576).toFixed(1).padStart(6)}  ${String(g.count).padStart(6)}  ${g.name.slice(0, 100)}`);
  return lines.join('\n');
}

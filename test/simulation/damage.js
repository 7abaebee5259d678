// A damaged stored answer (data that is not JSON: what `store check` calls sound, "a run looks it
// up again"): on some nights, before the runs, the stored answer of a key in tonight's file that is
// the oldest of a few, or the last answer in that key's history, is overwritten with a cut JSON
// text, as a disk or a person's sqlite3 session might leave it. The next run that needs it must look
// the key up again (or do without the earlier answer) and go on.
import fs from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { random } from './random.js';

/** Damages one stored answer; returns it ({ key, fetchedAt }), or undefined when none could be. */
export function damageOne(file, seed, night, emails) {
  if (!fs.existsSync(file)) return undefined;
  const db = new DatabaseSync(file);
  try {
    if (!db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'results'").get()) return undefined;
    const keys = new Set(emails.map((email) => email.trim().toLowerCase()));
    const oldest = db
      .prepare("SELECT key, fetched_at AS fetchedAt FROM results WHERE op = 'lookup_email' AND found = 1 ORDER BY fetched_at, key")
      .all()
      .filter((row) => keys.has(row.key))
      .slice(0, 5);
    if (oldest.length === 0) return undefined;
    const r = random(seed, 'damage', night.n);
    const victim = oldest[r.int(0, oldest.length - 1)];
    const cut = '{"lead": {"name": "cut he';
    const earlier = db
      .prepare(
        "SELECT rowid, fetched_at AS fetchedAt FROM history WHERE op = 'lookup_email' AND key = ? AND data IS NOT NULL ORDER BY replaced_at DESC LIMIT 1",
      )
      .get(victim.key);
    if (earlier && r.chance(0.5)) {
      db.prepare('UPDATE history SET data = ? WHERE rowid = ?').run(cut, earlier.rowid);
      return { key: victim.key, fetchedAt: earlier.fetchedAt, where: 'history' };
    }
    db.prepare("UPDATE results SET data = ? WHERE op = 'lookup_email' AND key = ?").run(cut, victim.key);
    return { ...victim, where: 'current' };
  } finally {
    db.close();
  }
}

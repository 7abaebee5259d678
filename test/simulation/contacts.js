// The contacts file, a little different every night (rows added, removed, an email edited, now and
// then a malformed address that the next night's file no longer has), from the plan alone.
import fs from 'node:fs';
import { random } from './random.js';

const WORDS = ['ann', 'bo', 'cy', 'di', 'ed', 'flo', 'gus', 'hal', 'ivy', 'jo', 'kit', 'lu', 'max', 'ned', 'ola', 'pip'];

/** Person `id`'s address: one of 37 companies, never a word the sandbox reads (`notfound`, `reject`). */
export function emailOf(id) {
  return `${WORDS[id % WORDS.length]}.p${id}@co${id % 37}.example`;
}

export class Contacts {
  #rows;
  #next;
  #seed;

  constructor(world) {
    this.#seed = world.seed;
    this.#rows = Array.from({ length: world.rows }, (_, id) => ({ id, email: emailOf(id) }));
    this.#next = world.rows;
  }

  /** Applies night `night`'s edits (the malformed row of the night before goes first). */
  edit(night) {
    const r = random(this.#seed, 'contacts', night.n);
    this.#rows = this.#rows.filter((row) => !row.malformed);
    if (night.n === 0) return;
    for (let i = 0; i < night.contacts.remove && this.#rows.length > 1; i += 1) this.#rows.splice(r.int(0, this.#rows.length - 1), 1);
    for (let i = 0; i < night.contacts.add; i += 1) {
      const id = this.#next++;
      this.#rows.splice(r.int(0, this.#rows.length), 0, { id, email: emailOf(id) });
    }
    if (night.contacts.edit) {
      const id = this.#next++;
      this.#rows[r.int(0, this.#rows.length - 1)] = { id, email: emailOf(id) };
    }
    if (night.contacts.malformed) this.#rows.splice(r.int(0, this.#rows.length), 0, { id: -1, email: `no-at-sign.${night.n}.example`, malformed: true });
  }

  /** The keys in file order. */
  get emails() {
    return this.#rows.map((row) => row.email);
  }

  get hasMalformed() {
    return this.#rows.some((row) => row.malformed);
  }

  write(file) {
    const lines = ['email,name', ...this.#rows.map((row) => `${row.email},Person ${row.id}`)];
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
  }
}

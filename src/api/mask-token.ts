// The token is never shown: where a message (a server's echo, a command line) holds it, it becomes
// `***`. A token as long as a real one (16 characters: the command line refuses shorter) is masked
// wherever it appears. A shorter one (a library caller's test token) is masked only where it
// stands whole: a token "x" must not turn every word holding an x into "pro***y".

/** A letter or digit beside it makes a short token part of a longer word. */
const TOKEN_CHARACTER = /[A-Za-z0-9_]/;

/** From this length on, a token is no piece of ordinary text: every occurrence is masked. */
const REAL_LENGTH = 16;

export function maskToken(text: string, token: string): string {
  if (!token || !text.includes(token)) return text;
  if (token.length >= REAL_LENGTH) return text.split(token).join('***');
  let out = '';
  let from = 0;
  for (let at = text.indexOf(token); at !== -1; at = text.indexOf(token, at + 1)) {
    if (at < from) continue;
    const before = text[at - 1];
    const after = text[at + token.length];
    const whole = (before === undefined || !TOKEN_CHARACTER.test(before)) && (after === undefined || !TOKEN_CHARACTER.test(after));
    if (!whole) continue;
    out += `${text.slice(from, at)}***`;
    from = at + token.length;
  }
  return out + text.slice(from);
}

// A contact export of rows of uneven width (names and notes of random length, seeded), the kind
// that makes a progress total from "rows so far × size ÷ bytes so far" wrong: about 190 bytes a
// row (notes up to 300 characters), so that 2,500 rows are larger than one read chunk (256 KiB) and the
// total must be estimated.
export function unevenContacts(rows: number, seed = 7, notes = 300): string {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const word = (min: number, max: number, letters = 'abcdefghijklmnopqrstuvwxyzäöü') =>
    Array.from({ length: min + Math.floor(random() * (max - min)) }, () => letters[Math.floor(random() * letters.length)]).join('');
  const lines = ['id,name,email,notes'];
  for (let i = 1; i <= rows; i += 1)
    lines.push(`${i},${word(3, 14)},${word(3, 10, 'abcdefghijklmnopqrstuvwxyz')}${i}@example${i % 40}.com,"${word(0, notes)}"`);
  return `${lines.join('\n')}\n`;
}

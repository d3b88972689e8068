// The numbers a person reads on the pages: counts with thousands
// separators ("1,000,000 features"), sizes in bytes with their unit. Pure:
// the tests (web/test) read this module in Node.

const integer = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat('en', { maximumFractionDigits: 2 });

/** count writes a number with thousands separators: 1234567 as
 * "1,234,567", 1234.5 as "1,234.5" (two decimals at most); anything not a
 * finite number as it is (an empty string for null). */
export function count(n) {
  if (n == null || n === '') return '';
  const v = Number(n);
  if (!Number.isFinite(v)) return String(n);
  return (Number.isInteger(v) ? integer : decimal).format(v);
}

/** counted writes a count and its noun, singular for exactly one:
 * counted(1000, 'feature') is "1,000 features", counted(1, 'match',
 * 'matches') "1 match". */
export function counted(n, one, many = one + 's') {
  return `${count(n)} ${Number(n) === 1 ? one : many}`;
}

const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];

/** size writes a size in bytes in its unit, by thousands (SI, as browsers
 * and file managers show downloads): 999 as "999 bytes", 1536 as "1.5 kB",
 * 2500000 as "2.5 MB"; one decimal below ten units. */
export function size(bytes) {
  let v = Number(bytes);
  if (!Number.isFinite(v) || v < 0) return '';
  if (v < 1000) return counted(v, 'byte');
  let u = 0;
  while (v >= 1000 && u < units.length - 1) { v /= 1000; u++; }
  // 999.95 kB rounds to 1000: written as the next unit.
  if (Math.round(v * 10) / 10 >= 1000 && u < units.length - 1) { v /= 1000; u++; }
  const digits = v < 10 ? 1 : 0;
  return new Intl.NumberFormat('en', { maximumFractionDigits: digits }).format(v) + ' ' + units[u];
}

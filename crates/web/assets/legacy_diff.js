// A line diff computed in the page, for the change a tool call shows. Temporary: it goes when the
// server sends each call's diff; until then nothing else should use it.

/** A line diff of `a` → `b` (longest common subsequence; small inputs only): [tag, line] pairs. */
export function lineDiff(a, b) {
  // A final line break ends the last line; it is not one more empty line.
  const x = a.replace(/\n$/, "").split("\n");
  const y = b.replace(/\n$/, "").split("\n");
  if (x.length * y.length > 250000) return null;
  const n = x.length;
  const m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) {
      out.push([" ", x[i++]]);
      j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push(["-", x[i++]]);
    } else {
      out.push(["+", y[j++]]);
    }
  }
  return out;
}

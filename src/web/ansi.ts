// A build's output as a terminal shows it: SGR escape codes (colours, bold, underline) become
// runs of text with class names (ansi-red, ansi-bold...), drawn by style.css; every other escape
// sequence is dropped. The text stays text: React renders each run as a span's content, so
// nothing in a log is ever read as HTML.

export interface Run {
  text: string;
  classes: string[];
}

const NAMES = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];

interface Style {
  fg: string | null;
  bg: string | null;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
}

const plain = (): Style => ({ fg: null, bg: null, bold: false, dim: false, italic: false, underline: false });

/** The 16 named colours as xterm draws them by default: what the nearest colour is measured against. */
const PALETTE: [string, number, number, number][] = [
  ['black', 0, 0, 0],
  ['red', 205, 0, 0],
  ['green', 0, 205, 0],
  ['yellow', 205, 205, 0],
  ['blue', 0, 0, 238],
  ['magenta', 205, 0, 205],
  ['cyan', 0, 205, 205],
  ['white', 229, 229, 229],
  ['bright-black', 127, 127, 127],
  ['bright-red', 255, 0, 0],
  ['bright-green', 0, 255, 0],
  ['bright-yellow', 255, 255, 0],
  ['bright-blue', 92, 92, 255],
  ['bright-magenta', 255, 0, 255],
  ['bright-cyan', 0, 255, 255],
  ['bright-white', 255, 255, 255],
];

/**
 * A colour as the nearest of the 16 named ones (the log draws those, in colours readable on its dark
 * background): true colour (38;2;r;g;b) and the 256-colour cube and greys alike. Null when a
 * component is out of range.
 */
export function nearestNamed(r: number, g: number, b: number): string | null {
  if (![r, g, b].every((c) => Number.isInteger(c) && c >= 0 && c <= 255)) return null;
  let best = PALETTE[0]!;
  let distance = Infinity;
  for (const entry of PALETTE) {
    // Weighted as the eye weighs red, green and blue ("redmean" would be finer; this is enough for 16 colours).
    const d = 3 * (r - entry[1]) ** 2 + 4 * (g - entry[2]) ** 2 + 2 * (b - entry[3]) ** 2;
    if (d < distance) [best, distance] = [entry, d];
  }
  return best[0];
}

const CUBE = [0, 95, 135, 175, 215, 255];

/** A 256-colour index as a named colour: the first 16 are the named ones, the cube and greys their nearest. */
const indexed = (n: number): string | null => {
  if (!Number.isInteger(n) || n < 0 || n > 255) return null;
  if (n < 8) return NAMES[n]!;
  if (n < 16) return `bright-${NAMES[n - 8]}`;
  if (n < 232) return nearestNamed(CUBE[Math.floor((n - 16) / 36)]!, CUBE[Math.floor((n - 16) / 6) % 6]!, CUBE[(n - 16) % 6]!);
  const grey = 8 + 10 * (n - 232);
  return nearestNamed(grey, grey, grey);
};

function apply(style: Style, params: number[]): Style {
  const s = { ...style };
  if (params.length === 0) params = [0];
  for (let i = 0; i < params.length; i++) {
    const p = params[i]!;
    if (p === 0) Object.assign(s, plain());
    else if (p === 1) s.bold = true;
    else if (p === 2) s.dim = true;
    else if (p === 3) s.italic = true;
    else if (p === 4) s.underline = true;
    else if (p === 22) s.bold = s.dim = false;
    else if (p === 23) s.italic = false;
    else if (p === 24) s.underline = false;
    else if (p >= 30 && p <= 37) s.fg = NAMES[p - 30]!;
    else if (p >= 90 && p <= 97) s.fg = `bright-${NAMES[p - 90]}`;
    else if (p === 39) s.fg = null;
    else if (p >= 40 && p <= 47) s.bg = NAMES[p - 40]!;
    else if (p >= 100 && p <= 107) s.bg = `bright-${NAMES[p - 100]}`;
    else if (p === 49) s.bg = null;
    else if (p === 38 || p === 48) {
      // 38;5;n (256 colours) or 38;2;r;g;b (true colour), drawn as the nearest named colour.
      const mode = params[i + 1];
      const colour =
        mode === 5 ? indexed(params[i + 2] ?? -1) : mode === 2 ? nearestNamed(params[i + 2] ?? -1, params[i + 3] ?? -1, params[i + 4] ?? -1) : null;
      if (p === 38) s.fg = colour;
      else s.bg = colour;
      i += mode === 5 ? 2 : mode === 2 ? 4 : 1;
    }
  }
  return s;
}

const classesOf = (s: Style): string[] => {
  const c: string[] = [];
  if (s.fg) c.push(`ansi-${s.fg}`);
  if (s.bg) c.push(`ansi-bg-${s.bg}`);
  if (s.bold) c.push('ansi-bold');
  if (s.dim) c.push('ansi-dim');
  if (s.italic) c.push('ansi-italic');
  if (s.underline) c.push('ansi-underline');
  return c;
};

// CSI sequences (ESC [ ... final byte), OSC sequences (ESC ] ... BEL or ESC \), and other two-byte escapes.
const ESCAPE = /\x1b\[([0-9;:?]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** A line rewritten in place with carriage returns (a progress bar) as it finally stood. */
const overwritten = (text: string) => text.replace(/[^\n]*\r(?!\n)/g, '');

/** `output` as runs of styled text, escape sequences removed. */
export function ansiRuns(output: string): Run[] {
  const text = overwritten(output);
  const runs: Run[] = [];
  let style = plain();
  let at = 0;
  const push = (chunk: string) => {
    if (!chunk) return;
    const classes = classesOf(style);
    const last = runs[runs.length - 1];
    if (last && last.classes.join(' ') === classes.join(' ')) last.text += chunk;
    else runs.push({ text: chunk, classes });
  };
  for (const m of text.matchAll(ESCAPE)) {
    push(text.slice(at, m.index));
    at = m.index + m[0].length;
    if (m[2] === 'm') {
      const params = (m[1] ?? '')
        .split(/[;:]/)
        .filter((x) => x !== '')
        .map(Number);
      style = apply(style, params.every(Number.isFinite) ? params : [0]);
    }
  }
  push(text.slice(at));
  return runs;
}

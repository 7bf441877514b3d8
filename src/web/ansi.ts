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

/** A 256-colour index as one of the 16 named colours, or null for the cube and greys (shown as the default). */
const indexed = (n: number): string | null => (n < 8 ? NAMES[n]! : n < 16 ? `bright-${NAMES[n - 8]}` : null);

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
      // 38;5;n (256 colours) or 38;2;r;g;b (true colour): the named ones are kept, the others are left as the default.
      const mode = params[i + 1];
      const colour = mode === 5 ? indexed(params[i + 2] ?? -1) : null;
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

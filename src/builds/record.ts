import { DEFAULT_BUILD_LIMITS } from '../config.ts';
import type { PrismaClient } from '../db/database.ts';
import { announceProgress, type ProgressDeps } from '../db/progress.ts';
import type { Events } from '../events.ts';
import type { SandboxRun } from '../sandbox/sandbox.ts';
import { type RunResult, runCommand } from '../sandbox/subprocess.ts';

export const MASK = '*****';

export interface RecorderLimits {
  /** Output kept per command, in bytes (LECTERN_BUILD_LOG_COMMAND_BYTES). */
  maxCommandBytes: number;
  /** Output kept for the whole build, in bytes (LECTERN_BUILD_LOG_BYTES). */
  maxBuildBytes: number;
}

/** The end of a command's output kept past its bound: at most this, and at most a quarter of the bound. */
const TAIL_BYTES = 8 * 1024;
/** Below this much room left in the build's log, a command keeps only its last words. */
const MIN_COMMAND_BYTES = 1024;
/** What a command keeps once the build's log is full: a note and this much of its end. */
const LAST_WORDS_BYTES = 512;
/** Encoded forms shorter than this are not masked (a 4-character value's base64 pieces would hit ordinary text). */
const MIN_ENCODED_FORM = 6;

export function formatSize(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 ** 2) return `${+(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${+(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${+(n / 1024 ** 3).toFixed(1)} GiB`;
}

/** The longest start of `s` that is at most `n` bytes of UTF-8, never half a character. */
function prefixBytes(s: string, n: number): string {
  if (s.length * 3 <= n) return s;
  const { read } = new TextEncoder().encodeInto(s, new Uint8Array(Math.max(0, n)));
  return s.slice(0, read);
}

/** The longest end of `s` that is at most `n` bytes of UTF-8, never half a character. */
function suffixBytes(s: string, n: number): string {
  if (s.length * 3 <= n) return s;
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= n) return s;
  let start = buf.length - n;
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return buf.subarray(start).toString('utf8');
}

/**
 * The characters each common percent-encoder leaves as they are (letters and digits always):
 * RFC 3986's unreserved (Python's `quote(v, safe='')`, Go's `url.QueryEscape`), those and `/`
 * (`urllib.parse.quote`'s default), encodeURIComponent's, encodeURI's, and the form encoding's
 * (URLSearchParams, Java's URLEncoder, `quote_plus`' and PHP's `urlencode`'s). An empty set: every
 * byte encoded, as some tools write a whole value.
 */
const PERCENT_KEPT = ['-._~', '-._~/', "-_.!~*'()", "-_.!~*'();,/?:@&=+$#", '-._*', null] as const;

/**
 * A value percent-encoded as UTF-8, leaving letters, digits and `kept` as they are (`null`:
 * nothing kept), in upper- or lower-case hex, with `+` for a space if `plus`.
 */
export function percentEncode(value: string, kept: string | null, lower: boolean, plus: boolean): string {
  let out = '';
  for (const ch of value) {
    if (kept !== null && (/^[A-Za-z0-9]$/.test(ch) || kept.includes(ch))) out += ch;
    else if (ch === ' ' && plus) out += '+';
    else
      for (const byte of Buffer.from(ch, 'utf8')) {
        const hex = byte.toString(16).padStart(2, '0');
        out += `%${lower ? hex : hex.toUpperCase()}`;
      }
  }
  return out;
}

/**
 * The forms a secret takes in what programs print: as it is, JSON-escaped (as JavaScript writes
 * it, and as Python's json.dumps does, everything past `~` as `\uxxxx`), percent-encoded (the
 * characters each common encoder keeps, upper- and lower-case hex, `%20` or `+` for a space:
 * encodeURIComponent, encodeURI, `urllib.parse.quote` and `quote_plus`, form bodies, a value
 * encoded whole), and base64, standard and URL-safe, at each of the three alignments it can have
 * inside a longer encoded text (`user:secret` in an Authorization header): only the characters
 * that depend on the value alone, without the edges its neighbours change.
 */
export function secretForms(value: string): string[] {
  const forms = new Set<string>([value]);
  if (value.length < 4) return [value];
  const json = JSON.stringify(value).slice(1, -1);
  forms.add(json);
  // Python's json.dumps (ensure_ascii): everything past `~` as \uxxxx, lower-case hex.
  forms.add(json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  for (const kept of PERCENT_KEPT) for (const lower of [false, true]) for (const plus of [false, true]) forms.add(percentEncode(value, kept, lower, plus));
  const bytes = Buffer.from(value, 'utf8');
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    // Character i holds bits 6i..6i+6; the value's bits are 8k..8(k+n).
    const stable = b64.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6));
    if (stable.length >= MIN_ENCODED_FORM) {
      forms.add(stable);
      forms.add(stable.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms];
}

export class Recorder {
  /** Every form of every secret, longest first; `word`: a very short value, masked only as a whole word. */
  readonly #forms: { text: string; word: RegExp | null }[];
  readonly #replacements: [string, string][];
  readonly #limits: RecorderLimits;
  /** Bytes of the build's log used by the commands recorded (or reserved by those running). */
  #used = 0;
  private readonly db: PrismaClient;
  private readonly events: Events;
  private readonly buildId: number;
  /** `deps`: the build's database, and the events of the app whose followers hear of each write. */
  constructor(
    deps: ProgressDeps,
    buildId: number,
    secrets: string[],
    /** Long paths shown shorter: `[/x/venv/bin/, '']`. */
    replacements: [string, string][] = [],
    limits?: RecorderLimits,
  ) {
    this.db = deps.prisma;
    this.events = deps.events;
    this.buildId = buildId;
    // Longest first, so a value containing another is masked whole. Very short values would
    // mask ordinary text; they are masked only as whole words.
    const forms = new Map<string, RegExp | null>();
    for (const s of new Set(secrets.filter((x) => x.length > 0))) {
      for (const f of secretForms(s)) {
        if (s.length >= 4) forms.set(f, null);
        else if (!forms.has(f)) forms.set(f, new RegExp(`(?<![\\w])${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`, 'g'));
      }
    }
    this.#forms = [...forms].map(([text, word]) => ({ text, word })).sort((a, b) => b.text.length - a.text.length);
    this.#replacements = replacements;
    this.#limits = limits ?? { maxCommandBytes: DEFAULT_BUILD_LIMITS.logCommandBytes, maxBuildBytes: DEFAULT_BUILD_LIMITS.logBytes };
  }

  /** Announces that this build's rows changed (see `announceProgress`). */
  static announce(deps: ProgressDeps, buildId: number): Promise<void> {
    return announceProgress(deps, buildId);
  }

  /**
   * Length of the end of `text` that could be the first characters of a secret whose rest has not
   * been written yet (or was not kept): held back, or its start would be stored unmasked.
   */
  unsafeTail(text: string): number {
    let n = 0;
    for (const { text: s } of this.#forms) {
      for (let k = Math.min(s.length - 1, text.length); k > n; k--) {
        if (text.endsWith(s.slice(0, k))) {
          n = k;
          break;
        }
      }
    }
    return n;
  }

  /** Length of the start of `text` that could be the last characters of a secret whose start was not kept. */
  unsafeHead(text: string): number {
    let n = 0;
    for (const { text: s } of this.#forms) {
      for (let k = Math.min(s.length - 1, text.length); k > n; k--) {
        if (text.startsWith(s.slice(s.length - k))) {
          n = k;
          break;
        }
      }
    }
    return n;
  }

  mask(text: string): string {
    let out = text;
    for (const { text: s, word } of this.#forms) {
      if (!out.includes(s)) continue;
      out = word ? out.replace(word, MASK) : out.split(s).join(MASK);
    }
    return out;
  }

  display(argv: string[]): string {
    let text = asWritten(argv);
    for (const [from, to] of this.#replacements) text = text.split(from).join(to);
    return this.mask(text);
  }

  /**
   * A command whose output Lectern already has (a file it read itself, as `cat -- <file>` would
   * show it), recorded as one that ran and exited 0: bounded and masked like any command's output,
   * without a sandbox started for it.
   */
  async shown(description: string, argv: string[], text: string): Promise<void> {
    const log = this.#openLog();
    log.push(text);
    const output = this.#closeLog(log);
    const now = new Date();
    await this.db.buildCommand.create({
      data: { buildId: this.buildId, description, command: this.display(argv), output, exitCode: 0, startTime: now, endTime: now },
    });
    await announceProgress({ prisma: this.db, events: this.events }, this.buildId);
  }

  /** A command's log, with the room it may use taken from the build's at once (commands may overlap). */
  #openLog(): BoundedLog {
    const { maxCommandBytes, maxBuildBytes } = this.#limits;
    const room = Math.max(0, Math.min(maxCommandBytes, maxBuildBytes - this.#used));
    this.#used += room;
    return new BoundedLog(this, room, room < maxCommandBytes ? 'build' : 'command', this.#limits);
  }

  /** The log's final text; the notes about what was left out are not counted, only what was kept of the output. */
  #closeLog(log: BoundedLog): string {
    const output = log.final();
    this.#used += Math.min(log.room, Buffer.byteLength(output)) - log.room;
    return output;
  }

  async run(
    description: string,
    argv: string[],
    opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal; sandbox?: SandboxRun },
  ): Promise<RunResult & { commandId: number }> {
    const row = await this.db.buildCommand.create({
      data: { buildId: this.buildId, description, command: this.display(argv), startTime: new Date() },
    });
    await announceProgress({ prisma: this.db, events: this.events }, this.buildId);
    const log = this.#openLog();
    let written = '';
    let lastFlush = Date.now();
    let timer: NodeJS.Timeout | undefined;
    let flushing: Promise<unknown> = Promise.resolve();
    // At most one write a second, and output that came is written within a second even when
    // nothing follows it for a while.
    const flush = () => {
      timer = undefined;
      lastFlush = Date.now();
      const output = log.live();
      if (output === written) return;
      written = output;
      flushing = flushing.then(() =>
        this.db.buildCommand
          .update({ where: { id: row.id }, data: { output } })
          .then(() => announceProgress({ prisma: this.db, events: this.events }, this.buildId))
          .catch(() => {}),
      );
    };
    let result: RunResult;
    try {
      result = await runCommand(argv, {
        sandbox: opts.sandbox,
        cwd: opts.cwd,
        env: opts.env,
        timeoutMs: opts.timeoutMs,
        signal: opts.signal,
        onOutput: (chunk) => {
          log.push(chunk);
          timer ??= setTimeout(flush, Math.max(0, lastFlush + 1000 - Date.now()));
        },
      });
    } finally {
      clearTimeout(timer);
      await flushing;
    }
    // A command that could not start says so only in its result.
    if (log.total === 0 && result.output) log.push(result.output);
    const output = this.#closeLog(log);
    await this.db.buildCommand.update({ where: { id: row.id }, data: { output, exitCode: result.exitCode, endTime: new Date() } });
    await announceProgress({ prisma: this.db, events: this.events }, this.buildId);
    return { ...result, output, commandId: row.id };
  }
}

/**
 * One command's output, kept within `room` bytes: the first part while it fits, then only the
 * last few KiB (a moving window), and a count of everything. Masking happens on what is kept,
 * and never leaves part of a secret where the kept text was cut.
 */
class BoundedLog {
  /** Bytes of output seen. */
  total = 0;
  #head = '';
  #headBytes = 0;
  readonly #headLimit: number;
  /** Once the head is full: its masked, final form. */
  #frozen: string | null = null;
  #tail = '';
  readonly #tailLimit: number;

  private readonly recorder: Recorder;
  readonly room: number;
  /** Which bound `room` comes from. */
  private readonly bound: 'command' | 'build';
  private readonly limits: RecorderLimits;
  constructor(recorder: Recorder, room: number, bound: 'command' | 'build', limits: RecorderLimits) {
    this.recorder = recorder;
    this.room = room;
    this.bound = bound;
    this.limits = limits;
    if (room < MIN_COMMAND_BYTES) {
      this.#headLimit = 0;
      this.#tailLimit = LAST_WORDS_BYTES;
    } else {
      this.#tailLimit = Math.min(TAIL_BYTES, Math.floor(room / 4));
      this.#headLimit = room - this.#tailLimit;
    }
  }

  push(chunk: string): void {
    const bytes = Buffer.byteLength(chunk);
    this.total += bytes;
    if (this.#frozen === null) {
      if (this.#headBytes + bytes <= this.#headLimit) {
        this.#head += chunk;
        this.#headBytes += bytes;
        return;
      }
      const part = prefixBytes(chunk, this.#headLimit - this.#headBytes);
      this.#head += part;
      this.#headBytes += Buffer.byteLength(part);
      const masked = this.recorder.mask(this.#head);
      this.#frozen = masked.slice(0, masked.length - this.recorder.unsafeTail(masked));
      chunk = chunk.slice(part.length);
    }
    // The window holds at most #tailLimit characters (so at most 3 bytes each); cut to bytes at the end.
    const limit = this.#tailLimit;
    this.#tail =
      chunk.length >= limit ? chunk.slice(-limit) : this.#tail.length + chunk.length > limit ? (this.#tail + chunk).slice(-limit) : this.#tail + chunk;
  }

  /** What is shown while the command runs: nothing that may be the start of a secret still to come. */
  live(): string {
    if (this.#frozen === null) {
      const masked = this.recorder.mask(this.#head);
      return masked.slice(0, masked.length - this.recorder.unsafeTail(masked));
    }
    return `${this.#lineEnd(this.#frozen)}[Lectern: output of this command past ${formatSize(this.#headBytes)} is not being kept; its last lines are shown when it ends]\n`;
  }

  final(): string {
    if (this.#frozen === null) return this.recorder.mask(this.#head);
    let tail = suffixBytes(this.#tail, this.#tailLimit);
    const tailBytes = Buffer.byteLength(tail);
    if (this.#headBytes + tailBytes === this.total) return this.recorder.mask(this.#head + tail); // nothing left out after all
    tail = tail.slice(this.recorder.unsafeHead(tail));
    if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1);
    const why =
      this.bound === 'command'
        ? `a command's log is limited to ${formatSize(this.limits.maxCommandBytes)} (LECTERN_BUILD_LOG_COMMAND_BYTES)`
        : `this build's log is limited to ${formatSize(this.limits.maxBuildBytes)} in all (LECTERN_BUILD_LOG_BYTES)`;
    const dropped = this.total - this.#headBytes - tailBytes;
    const note =
      this.#headBytes === 0
        ? `[Lectern: output of this command was not kept but for its last ${formatSize(tailBytes)} (${formatSize(dropped)} left out, ${formatSize(this.total)} in all): ${why}]`
        : `[Lectern: output of this command past ${formatSize(this.#headBytes)} was not kept but for its last ${formatSize(tailBytes)} (${formatSize(dropped)} left out, ${formatSize(this.total)} in all): ${why}]`;
    return `${this.#lineEnd(this.#frozen)}${note}\n${this.recorder.mask(tail)}`;
  }

  #lineEnd(text: string): string {
    return text === '' || text.endsWith('\n') ? text : `${text}\n`;
  }
}

/**
 * A command as a person reads it, in the build's records, log and errors: a configuration's own
 * command, which runs as `bash -c <command>`, as it was written in .readthedocs.yaml (as Read the
 * Docs shows it); any other command's words quoted only where a shell needs it, the readable way.
 */
export function asWritten(argv: string[]): string {
  if (argv.length === 3 && /^(?:ba)?sh$/.test(argv[0]!) && argv[1] === '-c') return argv[2]!;
  return argv.map(quoteWord).join(' ');
}

/** One word as a shell reads it back: bare when it can be, in double quotes around a lone `'`. */
function quoteWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  if (!word.includes("'")) return `'${word}'`;
  if (!/[$`"\\!]/.test(word)) return `"${word}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

// asWritten(): a build command as a person reads it in the build's records, raw log and errors (as
// Read the Docs shows a configuration's commands): the configuration's own command as written, and
// other words quoted only where a shell needs it, never as `'"'"'`.
import { describe, expect, it } from 'vitest';
import { asWritten } from '../../src/builds/record.ts';

describe('asWritten', () => {
  it("shows a configuration's command, run by bash -c, as it was written", () => {
    expect(asWritten(['bash', '-c', `echo "it's quoted" && ls | wc -l`])).toBe(`echo "it's quoted" && ls | wc -l`);
    expect(asWritten(['sh', '-c', "printf '%s\\n' $HOME"])).toBe("printf '%s\\n' $HOME");
  });

  it('quotes other words only where needed, and reads back as the same words', () => {
    expect(asWritten(['python', '-m', 'sphinx', '-b', 'html', 'docs', '_build/html'])).toBe('python -m sphinx -b html docs _build/html');
    expect(asWritten(['git', 'commit', '-m', 'two words'])).toBe("git commit -m 'two words'");
    expect(asWritten(['echo', "it's"])).toBe(`echo "it's"`);
    expect(asWritten(['echo', `it's "$HOME"`])).toBe(`echo 'it'\\''s "$HOME"'`);
    expect(asWritten(['echo', ''])).toBe("echo ''");
    // More than `-c <command>` (a script with its arguments): every word shown, none dropped.
    expect(asWritten(['sh', '-c', 'mv "$1" "$2"', 'sh', 'a b', 'c'])).toBe(`sh -c 'mv "$1" "$2"' sh 'a b' c`);
  });

  it('never shows the unreadable form', () => {
    for (const argv of [
      ['bash', '-c', "echo 'x'"],
      ['echo', "a'b"],
      ['git', 'log', "--format='%H'"],
    ])
      expect(asWritten(argv)).not.toContain(`'"'"'`);
  });
});

// A build command as a person would write it. Lectern records each command as POSIX-quoted words
// (`bash -c 'echo "it'"'"'s"'`): a configuration's own command, run by `bash -c`, is shown as it was
// written in .readthedocs.yaml, and other words are quoted the readable way (double quotes for a
// word holding a single quote).

/** The words of a POSIX-quoted command line (quotes, backslashes), or null when it does not parse. */
export function shellWords(line: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = '';
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '$`"\\\n'.includes(line[j + 1]!)) j++;
        text += line[j];
      }
      if (j >= line.length) return null;
      word = (word ?? '') + text;
      i = j;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[i + 1];
      i++;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

const SAFE = /^[\w@%+=:,./$-]+$/;

/** One word quoted as a person would: bare when it can be, in double quotes around a single quote. */
function quoted(word: string): string {
  if (word !== '' && SAFE.test(word)) return word;
  if (!word.includes("'")) return `'${word}'`;
  if (!/[$`"\\!]/.test(word)) return `"${word}"`;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command to show for a recorded one. */
export function shownCommand(command: string): string {
  const words = shellWords(command);
  if (!words) return command;
  if (words.length === 3 && /^(?:\/(?:usr\/)?bin\/)?(?:ba)?sh$/.test(words[0]!) && words[1] === '-c') return words[2]!;
  return words.map(quoted).join(' ');
}

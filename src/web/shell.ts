// A build command as a person would write it. Lectern records commands that way now; builds
// recorded before held each as POSIX-quoted words (`bash -c 'echo "it'"'"'s"'`), whose
// configuration command is shown as it was written in .readthedocs.yaml.

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

/**
 * The command to show for a recorded one: Lectern records commands as a person reads them
 * (builds/record.ts asWritten); records made before that hold a configuration's command as
 * `bash -c '<command, quoted>'`, shown here as it was written.
 */
export function shownCommand(command: string): string {
  const words = command.startsWith('bash -c ') || command.startsWith('sh -c ') ? shellWords(command) : null;
  if (words?.length === 3 && words[1] === '-c') return words[2]!;
  return command;
}

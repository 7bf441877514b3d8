// ansiRuns(): a build log's colours as a terminal shows them (issue 22: "Build logs render ANSI
// colours as colours"), including the 256-colour and true-colour codes tools such as pip, rich
// and Sphinx's colorama emit, each drawn as the nearest of the 16 colours the log styles.
import { describe, expect, it } from 'vitest';
import { ansiRuns, nearestNamed } from '../../src/web/ansi.ts';

const E = '\x1b';

describe('ansiRuns', () => {
  it('reads the 16 colours, bold and resets', () => {
    expect(ansiRuns(`${E}[1;32mgreen bold${E}[0m plain ${E}[31mred${E}[0m`)).toEqual([
      { text: 'green bold', classes: ['ansi-green', 'ansi-bold'] },
      { text: ' plain ', classes: [] },
      { text: 'red', classes: ['ansi-red'] },
    ]);
  });

  it('draws 256-colour codes, the cube and the greys, as the nearest named colour', () => {
    const fg = (code: string) => ansiRuns(`${E}[${code}mx`)[0]!.classes;
    expect(fg('38;5;1')).toEqual(['ansi-red']);
    expect(fg('38;5;9')).toEqual(['ansi-bright-red']);
    expect(fg('38;5;196')).toEqual(['ansi-bright-red']); // the cube's pure red
    expect(fg('38;5;46')).toEqual(['ansi-bright-green']);
    expect(fg('38;5;21')).toEqual(['ansi-blue']);
    expect(fg('38;5;226')).toEqual(['ansi-bright-yellow']);
    expect(fg('38;5;232')).toEqual(['ansi-black']); // the darkest grey
    expect(fg('38;5;255')).toEqual(['ansi-white']); // the lightest grey, 238
    expect(fg('48;5;28')).toEqual(['ansi-bg-green']);
  });

  it('draws true-colour codes as the nearest named colour, and ignores malformed ones', () => {
    const fg = (code: string) => ansiRuns(`${E}[${code}mx`)[0]!.classes;
    expect(fg('38;2;255;85;85')).toEqual(['ansi-bright-red']);
    expect(fg('38;2;0;180;0')).toEqual(['ansi-green']);
    expect(fg('38:2:255:255:0')).toEqual(['ansi-bright-yellow']); // the colon form
    expect(fg('48;2;0;0;0')).toEqual(['ansi-bg-black']);
    expect(fg('38;2;999;0;0')).toEqual([]);
    expect(fg('38;5')).toEqual([]);
    // What follows a true-colour code is read as its own parameter.
    expect(fg('38;2;205;0;0;1')).toEqual(['ansi-red', 'ansi-bold']);
  });

  it('keeps text as text and drops other escapes', () => {
    expect(ansiRuns(`${E}]0;title${E}\\<b>not html</b>\n${E}[2K done 10%\r done 100%`)).toEqual([{ text: '<b>not html</b>\n done 100%', classes: [] }]);
  });

  it('finds each named colour nearest to itself', () => {
    expect(nearestNamed(205, 0, 0)).toBe('red');
    expect(nearestNamed(229, 229, 229)).toBe('white');
    expect(nearestNamed(127, 127, 127)).toBe('bright-black');
  });
});

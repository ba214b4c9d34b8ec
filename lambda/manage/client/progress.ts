// The progress of bulk work (files uploaded, keys deleted, items imported),
// written to stderr: a bar redrawn in place when stderr is a terminal, plain
// lines otherwise (at most one per tenth of the work), so that a log or a
// pipe gets a few readable lines and no control characters.

export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Progress {
  update(done: number): void;
  /** Ends the bar's line. */
  end(): void;
}

const BAR_WIDTH = 30;

export function createProgress(stream: ProgressStream, label: string, total: number): Progress {
  let shownTenth = -1;
  let drawn = false;
  return {
    update(done) {
      const fraction = total === 0 ? 1 : Math.min(1, done / total);
      if (stream.isTTY) {
        const filled = Math.round(BAR_WIDTH * fraction);
        stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${done}/${total}`);
        drawn = true;
        return;
      }
      const tenth = Math.floor(fraction * 10);
      if (tenth === shownTenth) return;
      shownTenth = tenth;
      stream.write(`${label}: ${done}/${total}\n`);
    },
    end() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}

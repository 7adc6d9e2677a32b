/**
 * The suites run side by side (their scenarios share the run's slots), but
 * a log reads best suite by suite: each suite's checks start, its steps,
 * then its verdicts. The suite being reported speaks at once; a later
 * suite's steps wait, in order, until its turn comes. Pure: the lines go
 * to `write`, whatever prints them.
 */
export class SuiteProgress<Suite> {
  private current = 0;
  private readonly held = new Map<number, { suite: Suite; line: string }[]>();

  constructor(private readonly write: (suite: Suite, line: string) => void) {}

  /** A step of the suite at `index` (in reporting order): shown now if it is being reported, else held. */
  step(index: number, suite: Suite, line: string): void {
    if (index === this.current) {
      this.write(suite, line);
      return;
    }
    const held = this.held.get(index) ?? [];
    held.push({ suite, line });
    this.held.set(index, held);
  }

  /** The suite at `index` is now being reported: its held steps are shown, in the order they came. */
  report(index: number): void {
    this.current = index;
    for (const { suite, line } of this.held.get(index) ?? []) this.write(suite, line);
    this.held.delete(index);
  }
}
